#!/usr/bin/env python3
"""Compares two harness runs against the same server: per-request answers and final scores.

Usage: compare_llama_server.py REF_OUTPUT_DIR OUR_OUTPUT_DIR TASK [TASK...]

Each directory is an --output_path of a run with --log_samples (the reference nests its files in a
folder named after the model; both are searched recursively). For every task it checks, document
by document, that the requests are the same strings, that every response is identical (the
loglikelihood and is_greedy of each request, exactly as floats; the generated text of each
generation) and that the filtered responses agree; then that every metric and stderr in the
results files is equal. Prints one summary line per task and exits 1 on any difference.
"""
import glob
import json
import math
import os
import sys

# Keys of a task's results entry that describe the run rather than score it.
NOT_SCORES = {"alias", "name", "sample_len", "sample_count"}


def one_file(root, pattern):
    found = sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True))
    if not found:
        sys.exit(f"compare: no {pattern} under {root}")
    return found[-1]  # newest by the date in the name


def load_samples(root, task):
    path = one_file(root, f"samples_{task}_*.jsonl")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    # One row per document and filter (gsm8k has two filters).
    return path, {(r["doc_id"], r.get("filter")): r for r in rows}


def same_number(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def as_float(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def loglikelihood_pairs(resps):
    """[[ [ll, greedy] ], ...] -> [(ll, greedy), ...] when resps are loglikelihood answers.

    The reference writes them as strings (str() of the tuple's items: '-12.5', 'False')."""
    out = []
    for r in resps:
        if not (isinstance(r, list) and len(r) == 1 and isinstance(r[0], list) and len(r[0]) == 2):
            return None
        ll, greedy = as_float(r[0][0]), r[0][1]
        if ll is None or str(greedy) not in ("True", "False"):
            return None
        out.append((ll, str(greedy) == "True"))
    return out


def compare_task(ref_root, our_root, task, problems):
    ref_path, ref = load_samples(ref_root, task)
    our_path, ours = load_samples(our_root, task)
    if set(ref) != set(ours):
        problems.append(f"{task}: documents differ: only ref {sorted(set(ref) - set(ours))[:10]}, "
                        f"only ours {sorted(set(ours) - set(ref))[:10]}")
    requests = identical = generations = same_text = 0
    max_abs = 0.0
    for doc_id in sorted(set(ref) & set(ours), key=str):
        r, o = ref[doc_id], ours[doc_id]
        if r.get("arguments") != o.get("arguments"):
            problems.append(f"{task} doc {doc_id}: request arguments differ")
            continue
        rp, op = loglikelihood_pairs(r["resps"]), loglikelihood_pairs(o["resps"])
        if rp is not None and op is not None and len(rp) == len(op):
            for i, ((rl, rg), (ol, og)) in enumerate(zip(rp, op)):
                requests += 1
                max_abs = max(max_abs, abs(rl - ol))
                if rl == ol and rg == og:
                    identical += 1
                else:
                    problems.append(f"{task} doc {doc_id} request {i}: ref ({rl!r}, {rg}) ours ({ol!r}, {og})")
        else:
            if len(r["resps"]) != len(o["resps"]):
                problems.append(f"{task} doc {doc_id}: {len(r['resps'])} vs {len(o['resps'])} responses")
                continue
            for i, (rr, orr) in enumerate(zip(r["resps"], o["resps"])):
                generations += 1
                if rr == orr:
                    same_text += 1
                else:
                    problems.append(f"{task} doc {doc_id} request {i}: ref {rr!r} ours {orr!r}")
        if r.get("filtered_resps") != o.get("filtered_resps"):
            problems.append(f"{task} doc {doc_id}: filtered_resps ref {r.get('filtered_resps')!r} "
                            f"ours {o.get('filtered_resps')!r}")
        for key in r:
            if key in ("doc", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
                       "target_hash", "filter", "metrics", "target", "doc_id"):
                continue
            if key in o and not same_number(r[key], o[key]):
                problems.append(f"{task} doc {doc_id}: {key} ref {r[key]!r} ours {o[key]!r}")
    parts = [f"{len(ref)} document-filter rows"]
    if requests:
        parts.append(f"{identical}/{requests} loglikelihood requests identical (max |diff| {max_abs:.3g})")
    if generations:
        parts.append(f"{same_text}/{generations} generations identical")
    print(f"{task}: " + ", ".join(parts))
    print(f"  ref  {ref_path}\n  ours {our_path}")


def compare_scores(ref_root, our_root, tasks, problems):
    ref = json.load(open(one_file(ref_root, "results_*.json"), encoding="utf-8"))["results"]
    ours = json.load(open(one_file(our_root, "results_*.json"), encoding="utf-8"))["results"]
    for task in tasks:
        if task not in ref or task not in ours:
            problems.append(f"{task}: missing from a results file")
            continue
        shown = []
        for key, value in ref[task].items():
            if key in NOT_SCORES:
                continue
            if key not in ours[task]:
                problems.append(f"{task}: ours lacks {key}")
            elif not same_number(value, ours[task][key]):
                problems.append(f"{task}: {key} ref {value!r} ours {ours[task][key]!r}")
            elif "stderr" not in key:
                shown.append(f"{key}={value!r}")
        print(f"{task} scores (ref = ours unless listed below): " + ", ".join(shown))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ref_root, our_root, tasks = sys.argv[1], sys.argv[2], sys.argv[3:]
    problems = []
    for task in tasks:
        compare_task(ref_root, our_root, task, problems)
    compare_scores(ref_root, our_root, tasks, problems)
    for p in problems[:50]:
        print("DIFF " + p)
    if len(problems) > 50:
        print(f"... and {len(problems) - 50} more differences")
    print("VERDICT: " + ("identical" if not problems else f"{len(problems)} differences"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

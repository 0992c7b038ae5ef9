#!/usr/bin/env python3
"""Whole-task comparison of `lm-eval run --model hf` with the reference harness's own `hf` model
(lm_eval 0.4.x + transformers < 4.48 on Debian's torch 1.13, offline through
../shared/tools/reference_datasets_shim): per-sample log-likelihoods, is_greedy, generations and
the final scores, task by task.

Environment: the .venv-hfref of scripts/compare_hf_reference.py (its docstring says how to make it).
Usage: .venv-hfref/bin/python scripts/compare_hf_tasks.py BUILD_DIR MODEL_DIR [task:limit[:gen_kwargs] ...]
$HF_EXTRA_MODEL_ARGS (e.g. max_length=128) is appended to both sides' model_args.
Exit 0 when every task agrees within the tolerance below, 1 otherwise.
"""
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("LMEVAL_SHARED", os.path.join(ROOT, "..", "shared"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from compare_hf_reference import for_transformers4  # noqa: E402

# Float32 on two different kernels (ours vs ATen through transformers): the summed
# log-likelihood of a continuation may differ in its last bits, growing with its length (a
# wikitext document sums thousands of tokens); scores must be equal.
TOL = 1e-4
REL_TOL = 1e-6
DEFAULT_TASKS = ["arc_easy:50", "lambada_openai:20", "wikitext:5", "gsm8k:5:max_gen_toks=32"]

# transformers' generate() asks whether the model is FSDP-managed; Debian's torch 1.13 cannot
# import torch.distributed.fsdp under Python 3.11.
PLUGIN = ("import transformers.generation.utils as g\n"
          "g.is_fsdp_managed_module = lambda *a, **k: False\n")


def run(cmd, env, log):
    with open(log, "w") as f:
        p = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}; see {log}")


def samples(out, task):
    files = glob.glob(os.path.join(out, "**", f"samples_{task}_*.jsonl"), recursive=True)
    if len(files) != 1:
        sys.exit(f"expected one samples file for {task} under {out}, found {files}")
    rows = {}
    for line in open(files[0]):
        r = json.loads(line)
        rows[(r["doc_id"], r["filter"])] = r
    return rows


def results(out):
    files = glob.glob(os.path.join(out, "**", "results_*.json"), recursive=True)
    return json.load(open(sorted(files)[-1]))["results"]


def numbers(x):
    """Flattens a resps/filtered_resps entry into its floats, bools and strings."""
    if isinstance(x, list):
        return [y for e in x for y in numbers(e)]
    if isinstance(x, str):
        try:
            return [float(x)]
        except ValueError:
            return [x]
    return [x]


def compare_task(task, ours_dir, ref_dir):
    a, b = samples(ours_dir, task), samples(ref_dir, task)
    row = {"task": task, "samples": f"{len(a)} ours / {len(b)} reference"}
    if a.keys() != b.keys():
        row["error"] = "different (doc_id, filter) sets"
        return row, False
    max_d, max_excess, mismatched = 0.0, 0.0, []
    for k in sorted(a):
        xa, xb = numbers(a[k]["resps"]), numbers(b[k]["resps"])
        if a[k]["arguments"] != b[k]["arguments"]:
            mismatched.append(f"doc {k[0]}: request arguments differ")
            continue
        for u, v in zip(xa, xb):
            if isinstance(u, float) and isinstance(v, float):
                if not (math.isinf(u) and u == v):
                    max_d = max(max_d, abs(u - v))
                    max_excess = max(max_excess, abs(u - v) / max(TOL, REL_TOL * abs(v)))
            elif u != v:
                mismatched.append(f"doc {k[0]} filter {k[1]}: {u!r} vs {v!r}")
    ra, rb = results(ours_dir)[task], results(ref_dir)[task]
    score_diffs = {m: (ra[m], rb[m]) for m in rb
                   if "," in m and "stderr" not in m and isinstance(rb[m], (int, float))
                   and abs(ra.get(m, float("nan")) - rb[m]) > TOL * max(1.0, abs(rb[m]))}
    row.update({"loglikelihood_max_abs_diff": max_d, "non_numeric_mismatches": mismatched[:5],
                "n_non_numeric_mismatches": len(mismatched), "score_diffs": score_diffs,
                "scores": {m: v for m, v in ra.items() if "," in m}})
    ok = max_excess <= 1.0 and not mismatched and not score_diffs
    return row, ok


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    build, model, tasks = args[0], os.path.abspath(args[1]), args[2:] or DEFAULT_TASKS
    exe = os.path.join(build, "lm-eval")
    work = tempfile.mkdtemp(prefix="hftasks_")
    plugin = os.path.join(work, "no_fsdp.py")
    open(plugin, "w").write(PLUGIN)
    hf_data = os.path.join(SHARED, "hf_data")
    env = dict(os.environ, LMEVAL_HF_DATA=hf_data, LMEVAL_PLUGINS=plugin, HF_DATASETS_OFFLINE="1",
               HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    ref_model = for_transformers4(model)
    shim = os.path.join(SHARED, "tools", "reference_datasets_shim", "run_lm_eval.py")
    extra_args = "," + os.environ["HF_EXTRA_MODEL_ARGS"] if os.environ.get("HF_EXTRA_MODEL_ARGS") else ""
    all_ok = True
    for spec in tasks:
        parts = spec.split(":")
        task, limit = parts[0], parts[1]
        extra = ["--gen_kwargs", parts[2]] if len(parts) > 2 else []
        common = ["--tasks", task, "--limit", limit, "--log_samples", "--device", "cpu",
                  "--batch_size", "1"] + extra
        ref_out, our_out = os.path.join(work, task, "ref"), os.path.join(work, task, "ours")
        os.makedirs(os.path.join(work, task))
        run([sys.executable, shim, "run", "--model", "hf", "--model_args",
             f"pretrained={ref_model},dtype=float32{extra_args}", "--output_path", ref_out] + common,
            env, ref_out + ".log")
        run([exe, "run", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32{extra_args}",
             "--output_path", our_out, "--data_dir", hf_data] + common, env, our_out + ".log")
        row, ok = compare_task(task, our_out, ref_out)
        all_ok &= ok
        row["verdict"] = "same" if ok else "DIFFERENT"
        print(json.dumps(row, ensure_ascii=False), flush=True)
    print("PASS" if all_ok else "FAIL")
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Expected outputs of lm-eval's C++ ports of reference helper modules (issue 15 point 6: mmlu_pro,
gpqa n_shot/zeroshot/cot, global_mmlu default/full, openai-mmmlu, llama3 instruct), computed by
the reference's own modules: each utils.py of PyPI lm-eval 0.4.13 imported by path and called as
the reference calls it (process_docs on a datasets.Dataset, doc functions on a row), on real rows
of ../shared/hf_data and crafted edge cases.

Writes tests/tasks/mc_library_ports_golden.json (read by tests/tasks/mc_library_ports_test.cpp):
  {"modules": {path: {"sha256": ..., "functions": [names]}},
   "filter_rows": rows, "cases": [...]}: a "filter" case names the rows of filter_rows that
  module.fn keeps ("out": their "i"), a "doc" case one row and each function's value on it
  ("outs"), a "process_docs" case its input rows and the rows returned.
A process_docs case holds its input rows and the rows it returns; a shuffling one (gpqa) also
the seed of the global `random` ("seed") or the number of earlier calls since the module was
imported ("call", gpqa n_shot's module-level generator).

Usage: scripts/gen_mc_library_port_goldens.py [--venv DIR] [--shared DIR]
(DIR: a venv with lm-eval==0.4.13 and datasets; default .venv-ref in the repo.)"""
import argparse
import hashlib
import importlib.util
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "tasks", "mc_library_ports_golden.json")

MODULES = ["mmlu_pro/utils.py", "gpqa/n_shot/utils.py", "gpqa/zeroshot/utils.py",
           "gpqa/cot_n_shot/utils.py", "global_mmlu/default/ar/utils.py",
           "global_mmlu/full/am/utils.py", "openai-mmmlu/default/utils.py"] + [
    f"llama3/instruct/mmlu_{lang}/utils.py" for lang in ("de", "es", "fr", "hi", "it", "pt", "th")
] + ["llama3/instruct/mmlu_pro/utils.py", "llama3/instruct/arc_challenge/utils.py"]


def load(tasks, rel, tag=""):
    spec = importlib.util.spec_from_file_location(
        "golden_" + rel.replace("/", "_").replace("-", "_").replace(".", "_") + tag,
        os.path.join(tasks, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_rows(hf, path, n=None):
    out = []
    with open(os.path.join(hf, path), encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if n and len(out) >= n:
                break
    return out


def filter_rows(mmlu_subjects, pro_categories):
    """Rows whose filter fields vary independently, so a filter on the wrong field keeps others."""
    cats = ["Business", "Humanities", "Medical", "Other", "STEM", "Social Sciences", "stem", ""]
    langs = ["de", "es", "fr", "hi", "it", "pt", "th"]
    rows = []
    for i in range(130):
        s = mmlu_subjects[i % len(mmlu_subjects)]
        other = mmlu_subjects[(i * 7 + 3) % len(mmlu_subjects)]
        variants = [s, s + "_test.csv_de-DE.csv", s + "_test-xx", "x" + s, None,
                    s + "_test.csv", other + "_test-" + s, s.upper()]
        rows.append({
            "i": i,
            "subject": other if i % 5 == 4 else s,
            "subject_category": cats[i % len(cats)],
            "Subject": variants[i % len(variants)],
            "subtask_name": f"mmlu_{langs[i % 7]}_chat.{mmlu_subjects[(i // 2) % 57]}"
                            + (" " if i % 11 == 10 else ""),
            "category": pro_categories[i % len(pro_categories)] if i % 13 else "Biology",
        })
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.in_venv:
        sys.exit(subprocess.call([os.path.join(args.venv, "bin", "python"), __file__,
                                  "--shared", args.shared, "--in-venv"]))
    import datasets
    import lm_eval

    datasets.disable_progress_bars()
    tasks = os.path.join(os.path.dirname(lm_eval.__file__), "tasks")
    hf = os.path.join(args.shared, "hf_data")
    golden = {"lm_eval": lm_eval.__version__ if hasattr(lm_eval, "__version__") else "",
              "modules": {}, "cases": []}
    cases = golden["cases"]
    mods = {}
    for rel in MODULES:
        mods[rel] = load(tasks, rel)
        names = sorted(n for n, v in vars(mods[rel]).items()
                       if callable(v) and not n.startswith("_") and n.startswith(
                           ("process_", "doc_to_", "fewshot_to_")) and n != "process_functions")
        golden["modules"][rel] = {
            "sha256": hashlib.sha256(open(os.path.join(tasks, rel), "rb").read()).hexdigest(),
            "functions": names}

    def process(rel, fn, rows, **extra):
        out = getattr(mods[rel], fn)(datasets.Dataset.from_list(rows))
        cases.append({"module": rel, "fn": fn, "kind": "process_docs", "input": rows,
                      "out": list(out), **extra})

    def docs(row, fns):
        cases.append({"kind": "doc", "input": row, "outs": [
            {"module": rel, "fn": fn, "out": getattr(mods[rel], fn)(row)} for rel, fn in fns]})

    # Filters: every exported process_* on rows varying each filter field.
    subjects = json.load(open(os.path.join(tasks, "openai-mmmlu", "subjects.json")))
    subjects = list(subjects)
    pro_cats = sorted({r["category"] for r in read_rows(
        hf, "TIGER-Lab/MMLU-Pro/default/test.jsonl")})
    frows = filter_rows(subjects, pro_cats)
    for rel in MODULES:
        if rel.startswith(("gpqa/", "llama3/instruct/arc")):
            continue
        for fn in golden["modules"][rel]["functions"]:
            if fn.startswith("process_") and fn != "process_docs":
                out = getattr(mods[rel], fn)(datasets.Dataset.from_list(frows))
                cases.append({"module": rel, "fn": fn, "kind": "filter",
                              "out": [r["i"] for r in out]})
    golden["filter_rows"] = frows

    # mmlu_pro doc functions: real validation rows of six categories, then edge cases.
    val = read_rows(hf, "TIGER-Lab/MMLU-Pro/default/validation.jsonl")
    seen, pro_rows = set(), []
    for r in val:
        if r["category"] not in seen and len(seen) < 6:
            seen.add(r["category"])
            pro_rows.append(r)
    base = dict(pro_rows[0])
    pro_rows += [
        dict(base, options=[f" opt{k}\u2003" for k in range(12)]),
        dict(base, options=["\u00a0x\u3000", "y\n", "\tz "], question="Q\u00a0 "),
        dict(base, options=[], cot_content="A: Let's think step by step. A: Let's think step by "
             "step. The answer is (B). The answer is (c). The answer is (J)."),
        dict(base, cot_content="  A: Let's think step by step.The answer is (A).\n"),
        dict(base, cot_content="A: Let's think step by step.\u00a0Step. The answer is (AB). "),
    ]
    for r in pro_rows:
        docs(r, [("mmlu_pro/utils.py", fn) for fn in ("doc_to_text", "fewshot_to_text",
                                                      "fewshot_to_target")]
             + [("llama3/instruct/mmlu_pro/utils.py", "fewshot_to_text")])

    # gpqa: real rows of each config, then edge cases (None, " [title]", doubled spaces, an
    # incorrect answer equal to the correct one after preprocessing).
    keep = ["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
            "Incorrect Answer 3", "Record ID"]
    g = []
    for cfg in ("gpqa_diamond", "gpqa_main"):
        g += [{k: r[k] for k in keep} for r in read_rows(hf, f"Idavidrein/gpqa/{cfg}/train.jsonl", 3)]
    g += [
        {"Question": "q1", "Correct Answer": " a  [title] b ", "Incorrect Answer 1": "x [y] z",
         "Incorrect Answer 2": "\u00a0w\u3000", "Incorrect Answer 3": "a   b", "Record ID": "e1"},
        {"Question": "q2", "Correct Answer": "same", "Incorrect Answer 1": " same ",
         "Incorrect Answer 2": "other", "Incorrect Answer 3": "same", "Record ID": "e2"},
        {"Question": "q3", "Correct Answer": "c", "Incorrect Answer 1": None,
         "Incorrect Answer 2": "i2", "Incorrect Answer 3": None, "Record ID": "e3"},
    ]
    for rel in ("gpqa/zeroshot/utils.py", "gpqa/cot_n_shot/utils.py"):
        for seed in (0, 1234):
            random.seed(seed)
            process(rel, "process_docs", g, seed=seed)
    n_shot = "gpqa/n_shot/utils.py"
    mods[n_shot] = load(tasks, n_shot, "_fresh")  # its module-level rng as just imported
    for call in range(3):
        process(n_shot, "process_docs", g, call=call)

    # llama3 arc_challenge: rows with numeric answer keys and with 3 or 5 choices.
    arc = read_rows(hf, "allenai/ai2_arc/ARC-Challenge/test.jsonl")
    pick = [r for r in arc if r["answerKey"] not in "ABCD"][:4]
    pick += [r for r in arc if len(r["choices"]["label"]) != 4][:3]
    pick += arc[:4]
    pick.append(dict(arc[0], answerKey="0", id="edge-0"))
    pick.append(dict(arc[0], answerKey=" 2 ", id="edge-space"))
    process("llama3/instruct/arc_challenge/utils.py", "process_docs", pick)

    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)} "
          f"({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs every folder of tests/fixtures/user_tasks (scripts/gen_user_task_corpus.py) through the
reference (PyPI lm-eval 0.4.13, its fake model `hashfake` of ../shared/goldens/tools) and through
lm-eval (`--model dummy`, the same definition), each from inside the folder (relative data_files
resolve there on both sides), and compares per task every samples line byte for byte (then key by
key where they differ), and the results blocks (results, groups, n-shot, n-samples,
higher_is_better, group_subtasks).
Usage: scripts/compare_user_tasks.py --venv VENV --lm-eval build/lm-eval [--shared ../shared]
           [--match REGEX] [--out DIR]
Prints one line per folder (identical / different / ref_error / ours_error) and a summary; writes
DIR/report.json.
"""
import argparse
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "tests", "fixtures", "user_tasks")

REF = r"""
import json, os, sys
shared, tasks, nf, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.path.insert(0, os.path.join(shared, "goldens", "tools"))
import lm_eval.models  # noqa: F401
import hashfake_plugin  # noqa: F401
from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager
tm = TaskManager(include_defaults=False, include_path=os.getcwd())
tracker = EvaluationTracker(output_path=out)
res = simple_evaluate(model="hashfake", tasks=tasks, log_samples=True, task_manager=tm,
                      evaluation_tracker=tracker, num_fewshot=None if nf == "" else int(nf))
samples = res.pop("samples")
tracker.save_results_aggregated(results=res, samples=samples)
for t in res["configs"]:
    tracker.save_results_samples(task_name=t, samples=samples[t])
"""


def load_outputs(dest):
    results = {}
    for f in glob.glob(os.path.join(dest, "**", "results_*.json"), recursive=True):
        results = json.load(open(f))
    samples = {}
    for f in glob.glob(os.path.join(dest, "**", "samples_*.jsonl"), recursive=True):
        task = re.sub(r"_\d{4}-\d\d-\d\dT.*$", "", os.path.basename(f)[len("samples_"):])
        samples[task] = open(f, encoding="utf-8").read().splitlines()
    return results, samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    ap.add_argument("--lm-eval", dest="lm_eval", required=True)
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--match", default="")
    ap.add_argument("--out", default="/tmp/lmeval_user_tasks")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location(
        "crl", os.path.join(REPO, "scripts", "compare_reference_library.py"))
    crl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(crl)
    shutil.rmtree(args.out, ignore_errors=True)
    report = {}
    for folder in sorted(glob.glob(os.path.join(CORPUS, "*"))):
        name = os.path.basename(folder)
        if not re.search(args.match, name):
            continue
        case = json.load(open(os.path.join(folder, "case.json")))
        nf = "" if case["num_fewshot"] is None else str(case["num_fewshot"])
        ref_dir, our_dir = os.path.join(args.out, name, "ref"), os.path.join(args.out, name, "ours")
        env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
                   HF_DATASETS_CACHE=os.path.join(args.out, "hf_cache"))
        r = subprocess.run([os.path.join(args.venv, "bin", "python"), "-c", REF,
                            os.path.abspath(args.shared), json.dumps(case["tasks"]), nf, ref_dir],
                           cwd=folder, env=env, capture_output=True, text=True)
        cmd = [os.path.abspath(args.lm_eval), "run", "--model", "dummy", "--include_path", ".",
               "--tasks", ",".join(case["tasks"]), "--log_samples", "--output_path", our_dir]
        if nf:
            cmd += ["--num_fewshot", nf]
        o = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                           env=dict(os.environ, VIRTUAL_ENV=os.path.abspath(args.venv)))
        entry = {}
        if r.returncode != 0:
            entry = {"status": "ref_error", "error": r.stderr.strip().splitlines()[-1:],
                     "ours_exit": o.returncode}
        elif o.returncode != 0:
            entry = {"status": "ours_error", "error": o.stderr.strip().splitlines()[-3:]}
        else:
            (rres, rsam), (ores, osam) = load_outputs(ref_dir), load_outputs(our_dir)
            diffs = []
            for task, lines in rsam.items():
                mine = osam.get(task)
                if mine is None:
                    diffs.append(f"{task}: no samples from lm-eval")
                    continue
                if mine != lines:
                    d = []
                    crl.diff([json.loads(x) for x in mine], [json.loads(x) for x in lines],
                             f"samples[{task}]", d)
                    diffs += d or [f"samples[{task}]: same values, different bytes"]
            for block in ("results", "groups", "n-shot", "n-samples", "higher_is_better",
                          "group_subtasks"):
                d = []
                crl.diff(ores.get(block, {}), rres.get(block, {}), block, d)
                diffs += d
            entry = {"status": "identical" if not diffs else "different", "diffs": diffs[:10]}
        report[name] = entry
        print(f"{name:28s} {entry['status']}", *(entry.get("diffs") or entry.get("error") or [])[:3],
              sep="\n    " if entry["status"] != "identical" else " ")
    os.makedirs(args.out, exist_ok=True)
    json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
    counts = {}
    for e in report.values():
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    print("summary:", counts)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reference outputs (requests, samples, results) of ONE command that runs several tasks whose
process_docs draw from generators (tests/fixtures/python_tasks/tasks/random_draws: the global
`random`, a module's own random.Random, numpy's global generator) beside the reference's
leaderboard_gpqa_diamond (a C++ port in lm-eval) and gpqa_diamond_zeroshot (Python), with no
model_args, so that the reference's EvaluationTracker draws the model name from the global random
too. Written to tests/fixtures/python_tasks/goldens_random/ (manifest in make_goldens.py's format)
for tests/tasks/functions/global_random_batch_test.cpp.

The reference (PyPI lm-eval 0.4.13, the versions of ../shared/goldens/README.md) runs through the
shared goldens/tools/run_reference.py (the offline datasets shim and the hashfake model) unchanged;
its data: the fixture's rows and ../shared/hf_data's GPQA.

Usage: scripts/gen_random_batch_goldens.py [VENV]   (default .venv-standin in the repo; it needs
lm-eval 0.4.13 with datasets and numpy). Needs ../shared (or LMEVAL_SHARED_DIR).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(REPO, "tests", "fixtures", "python_tasks")
# Kept in step with the test.
TASKS = ("py_random_global,leaderboard_gpqa_diamond,py_helpers_mc,py_random_module,"
         "gpqa_diamond_zeroshot,py_random_numpy,py_random_module_b,py_uneven_metrics")
LIMIT = 3


def main():
    venv = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, ".venv-standin"))
    shared = os.path.abspath(os.environ.get("LMEVAL_SHARED_DIR", os.path.join(REPO, "..", "shared")))
    out = os.path.join(FIXTURE, "goldens_random")
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "data")
        os.makedirs(data)
        os.symlink(os.path.join(FIXTURE, "data", "lmeval-fixtures"), os.path.join(data, "lmeval-fixtures"))
        os.symlink(os.path.join(shared, "hf_data", "Idavidrein"), os.path.join(data, "Idavidrein"))
        rec = os.path.join(scratch, "requests.jsonl")
        cli = ["run", "--model", "hashfake", "--tasks", TASKS, "--limit", str(LIMIT),
               "--log_samples", "--output_path", "OUT", "--include_path", "tests/fixtures/python_tasks/tasks"]
        real = [os.path.join(venv, "bin", "python"),
                os.path.join(shared, "goldens", "tools", "run_reference.py")]
        real += [os.path.join(scratch, "out") if c == "OUT" else c for c in cli]
        env = dict(os.environ, LMEVAL_HF_DATA=data, HASHFAKE_RECORD=rec)
        t0 = time.time()
        subprocess.run(real, env=env, cwd=REPO, check=True)
        seconds = round(time.time() - t0, 1)

        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(os.path.join(out, "results"))
        os.makedirs(os.path.join(out, "samples", "batch"))
        os.makedirs(os.path.join(out, "requests"))
        (res_file,) = glob.glob(os.path.join(scratch, "out", "**", "results_*.json"), recursive=True)
        text = open(res_file, encoding="utf-8").read()
        # The reference's package folder (its tasks' config_source) as make_goldens.py strips it.
        pkg = subprocess.run([real[0], "-c", "import lm_eval, os; print(os.path.dirname("
                              "os.path.dirname(lm_eval.__file__)))"],
                             capture_output=True, text=True, check=True).stdout.strip()
        for bad in (REPO + "/", scratch, pkg + "/"):
            text = text.replace(bad, "")
        open(os.path.join(out, "results", "batch.json"), "w", encoding="utf-8").write(text)
        tasks = sorted(json.loads(text)["configs"])
        samples = []
        for sf in sorted(glob.glob(os.path.join(scratch, "out", "**", "samples_*.jsonl"), recursive=True)):
            task = os.path.basename(sf)[len("samples_"):].rsplit("_", 1)[0]
            path = os.path.join("samples", "batch", task + ".jsonl")
            shutil.copy(sf, os.path.join(out, path))
            samples.append(path)
        n = sum(1 for _ in open(rec, encoding="utf-8"))
        shutil.copy(rec, os.path.join(out, "requests", "batch.jsonl"))
    entry = {
        "run": TASKS, "num_fewshot": "task default", "limit": LIMIT,
        "command": "LMEVAL_HF_DATA=<fixture data + hf_data/Idavidrein> HASHFAKE_RECORD=<rec.jsonl> "
                   "python goldens/tools/run_reference.py " + " ".join(cli),
        "exit_code": 0, "seconds": seconds, "results": "results/batch.json", "tasks": tasks,
        "requests": "requests/batch.jsonl", "requests_received": n, "requests_kept": n,
        "requests_doc_id_below": 1000, "samples": samples, "samples_doc_id_below": 1000,
        "samples_arguments_kept_for_doc_id_below": 1000,
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump([entry], f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(tasks)} tasks, {n} requests, {seconds} s", file=sys.stderr)


if __name__ == "__main__":
    main()

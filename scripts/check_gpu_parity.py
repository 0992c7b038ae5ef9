#!/usr/bin/env python3
"""Correctness of the CUDA path against the float32 CPU path (issue 16, point 4).

Runs `lm-eval run --model hf` twice on the same model, task and documents, once with
`--device cpu` and once with `--device cuda`, both with dtype float32, and compares every
sample's log-likelihoods (absolute difference at most --tol, default 1e-4) and the chosen answer
(argmax over the choices equal). Exit 0 when all agree, 1 otherwise.

Usage: scripts/check_gpu_parity.py --lm-eval BIN --model DIR --data HF_DATA
         [--tasks arc_easy,hellaswag] [--limit 40] [--tol 1e-4] [--out DIR]
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def samples(out_dir, task):
    files = glob.glob(os.path.join(out_dir, "**", f"samples_{task}_*.jsonl"), recursive=True)
    if not files:
        raise SystemExit(f"no samples for {task} under {out_dir}")
    with open(sorted(files)[-1]) as fh:
        return {r["doc_id"]: r for r in map(json.loads, fh)}


def lls(rec):
    return [float(x[0]) for x in rec["filtered_resps"]]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lm-eval", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--tasks", default="arc_easy,hellaswag")
    p.add_argument("--limit", default="40")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--out", default="/tmp/lmeval_gpu_parity")
    a = p.parse_args()
    outs = {}
    for dev in ("cpu", "cuda"):
        outs[dev] = os.path.join(a.out, dev)
        cmd = [a.lm_eval, "run", "--model", "hf", "--device", dev, "--model_args",
               f"pretrained={a.model},dtype=float32", "--tasks", a.tasks, "--limit", a.limit,
               "--batch_size", "auto", "--data_dir", a.data, "--log_samples",
               "--output_path", outs[dev]]
        rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
        if rc:
            raise SystemExit(f"{dev} run failed with exit code {rc}: {' '.join(cmd)}")
    bad = 0
    for task in a.tasks.split(","):
        c, g = samples(outs["cpu"], task), samples(outs["cuda"], task)
        worst, argmax_diff = 0.0, 0
        for doc_id, rc in c.items():
            x, y = lls(rc), lls(g[doc_id])
            worst = max(worst, max(abs(u - v) for u, v in zip(x, y)))
            if max(range(len(x)), key=x.__getitem__) != max(range(len(y)), key=y.__getitem__):
                argmax_diff += 1
        ok = worst <= a.tol and argmax_diff == 0 and len(c) == len(g)
        bad += not ok
        print(f"{task}: {len(c)} docs, max |cpu - cuda| log-likelihood {worst:.2e} "
              f"(tolerance {a.tol:g}), argmax differs in {argmax_diff} docs: "
              f"{'OK' if ok else 'FAIL'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

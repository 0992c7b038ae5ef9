#!/usr/bin/env python3
"""Writes tests/tasks/functions/rouge_agg_goldens.json: the reference's own rouge1_agg (catalan_bench,
spanish_bench and galician_bench utils.py of lm-eval 0.4.13, each running
`evaluate.load("rouge").compute(...)` over rouge_score's BootstrapAggregator) on small item lists,
after np.random.seed(seed) as simple_evaluate seeds numpy, for the unit test of lm-eval's native
port (src/tasks/functions/iberian_rouge_functions.cpp, rouge_score.cpp).

Usage: scripts/gen_rouge_agg_goldens.py [--venv DIR] [--rouge DIR]
  --venv   an environment with lm-eval==0.4.13, evaluate, rouge_score and transformers 4 (the three
           modules import transformers.data.metrics.squad_metrics); default .venv-ref in the repo.
  --rouge  a folder holding evaluate's `rouge` metric script (rouge.py of huggingface/evaluate's
           metrics/rouge, what evaluate.load("rouge") fetches from the Hub); default: the newest
           copy in evaluate's module cache (~/.cache/huggingface/modules/evaluate_modules/metrics/
           rouge/<hash>). evaluate.load("rouge") finds it as ./rouge/rouge.py, so no network is used.
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEST = os.path.join(ROOT, "tests", "tasks", "functions", "rouge_agg_goldens.json")
MODULES = ["catalan_bench", "spanish_bench", "galician_bench"]

WORDS = ("el gat la casa menja peix blanc negre un una de però més Àngel ÇA niño año "
         "2024 3,5 x-y São İstanbul KELVIN café l'home d'aigua").split()


def text(rnd):
    k = rnd.randint(0, 9)
    words = [rnd.choice(WORDS) for _ in range(k)]
    seps = [rnd.choice([" ", " ", " ", ", ", ".\n", "  ", "!"]) for _ in range(k)]
    return "".join(w + s for w, s in zip(words, seps)).strip(" ")


def items(rnd, n, empty_every=0):
    out = []
    for i in range(n):
        ref, pred = text(rnd), text(rnd)
        if empty_every and i % empty_every == 0:
            pred = ""
        out.append([ref, pred])
    return out


def cases():
    rnd = random.Random(20261126)
    out = []
    for n in (1, 2, 3, 7, 8, 9, 16, 17, 40, 100):
        for seed in (1234, 0, 42, 2**32 - 1):
            out.append({"name": f"n={n} seed={seed}", "seed": seed, "items": items(rnd, n)})
    out.append({"name": "n=1 empty prediction", "seed": 1234, "items": [["una casa blanca", ""]]})
    out.append({"name": "n=12 every third prediction empty", "seed": 1234,
                "items": items(rnd, 12, empty_every=3)})
    out.append({"name": "n=5 all predictions empty", "seed": 1234,
                "items": [[text(rnd), ""] for _ in range(5)]})
    out.append({"name": "n=6 identical pairs", "seed": 1234,
                "items": [["el gat menja peix", "El GAT menja peix!"]] * 6})
    out.append({"name": "n=4 references and predictions without a-z0-9 tokens", "seed": 1234,
                "items": [["¿¡…!?", "—"], ["ñ é", "ñ é"], ["", ""], ["a", "àa"]]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--rouge", default=None)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inside:
        rouge = args.rouge
        if rouge is None:
            found = sorted(glob.glob(os.path.expanduser(
                "~/.cache/huggingface/modules/evaluate_modules/metrics/rouge/*/rouge.py")),
                key=os.path.getmtime)
            if not found:
                sys.exit("no cached evaluate rouge module; pass --rouge DIR")
            rouge = os.path.dirname(found[-1])
        work = tempfile.mkdtemp(prefix="rouge-goldens-")
        os.symlink(os.path.abspath(rouge), os.path.join(work, "rouge"))
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                   VIRTUAL_ENV=os.path.abspath(args.venv))
        subprocess.run([os.path.join(args.venv, "bin", "python"), os.path.abspath(__file__),
                        "--inside"], env=env, check=True, cwd=work)
        return
    import importlib

    import evaluate
    import numpy as np
    import rouge_score

    fns = [importlib.import_module(f"lm_eval.tasks.{m}.utils").rouge1_agg for m in MODULES]
    out = []
    for c in cases():
        results = []
        for fn in fns:
            np.random.seed(c["seed"])
            before = np.random.get_state()
            results.append(fn(c["items"]))
            after = np.random.get_state()
            assert (before[1] == after[1]).all() and before[2] == after[2], "numpy state moved"
        assert len(set(results)) == 1, (c["name"], results)
        c["result"] = results[0]
        out.append(c)
    # Successive calls in one run (the tasks of one run aggregate in turn): each call seeds from
    # the global generator, which evaluate restores after compute, so every call sees the same seed.
    seq_rnd = random.Random(7)
    seq = {"name": "three successive calls after one np.random.seed(1234)", "seed": 1234,
           "calls": []}
    np.random.seed(1234)
    for n in (5, 9, 1):
        its = items(seq_rnd, n)
        seq["calls"].append({"items": its, "result": fns[0](its)})
    with open(DEST, "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/gen_rouge_agg_goldens.py", "modules": MODULES,
                   "evaluate": evaluate.__version__, "numpy": np.__version__,
                   "rouge_score": getattr(rouge_score, "__version__", "0.1.2"),
                   "cases": out, "successive_calls": seq}, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out)} cases to {os.path.relpath(DEST, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())

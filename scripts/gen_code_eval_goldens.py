#!/usr/bin/env python3
"""Expected outputs of lm-eval's ports of the reference's humaneval/utils.py and mbpp/utils.py
(src/tasks/functions/{humaneval,mbpp}_functions.cpp, code_eval.cpp), computed by those modules
themselves and the `evaluate` package's code_eval metric, which runs every program. Writes
tests/tasks/functions/code_eval_goldens.json.

Both modules call evaluate.load("code_eval") when imported, which fetches the metric's script
from the Hugging Face Hub. Offline, give the metric's folder instead: --code-eval DIR, DIR holding
code_eval.py and execute.py of github.com/huggingface/evaluate's metrics/code_eval (the Hub's
evaluate-metric/code_eval space holds the same two files); evaluate.load("code_eval") then loads
DIR. Run with the reference's Python (lm-eval 0.4.13 and evaluate installed):

  HF_ALLOW_CODE_EVAL=1 VENV/bin/python scripts/gen_code_eval_goldens.py --code-eval DIR

It runs about 40 programs (one of them until code_eval's 3 s timeout)."""
import argparse
import importlib.util
import json
import math
import os
import sys

import evaluate
import lm_eval

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "tasks", "functions", "code_eval_goldens.json")
TASKS = os.path.join(os.path.dirname(lm_eval.__file__), "tasks")


def load_module(rel, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(TASKS, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plain(x):
    """NaN as the string "nan" (JSON has no NaN); numpy scalars as Python floats."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    x = float(x)
    return "nan" if math.isnan(x) else x


ADD_OK = "def add(a, b):\n    return a + b\n"
ADD_BAD = "def add(a, b):\n    return a * b\n"
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n"

# (name, program body before the test, expected to show) -- every candidate is run against TEST
# with check(add), as humaneval's doc_to_target appends it.
PROGRAMS = [
    ("passes", ADD_OK),
    ("wrong answer", ADD_BAD),
    ("syntax error", "def add(a, b)\n    return a + b\n"),
    ("raises", "def add(a, b):\n    raise ValueError('no')\n"),
    ("prints and passes", "print('hello')\nimport sys\nprint('x', file=sys.stderr)\n" + ADD_OK),
    ("reads stdin", "x = input()\n" + ADD_OK),
    ("calls exit()", "exit(0)\n" + ADD_OK),
    ("sys.exit(0)", "import sys\nsys.exit(0)\n" + ADD_OK),
    ("os.remove is disabled", "import os\nos.remove('nothing')\n" + ADD_OK),
    ("os.getcwd is disabled", "import os\nos.getcwd()\n" + ADD_OK),
    ("subprocess is disabled", "import subprocess\nsubprocess.run(['true'])\n" + ADD_OK),
    ("__name__ is not defined", "if __name__ == '__main__':\n    pass\n" + ADD_OK),
    ("standard library", "import math, heapq, re, collections, itertools\n" + ADD_OK),
    ("recursion", "def f(n):\n    return f(n + 1)\nf(0)\n" + ADD_OK),
    ("writes a file in its directory", "open('x.txt', 'w').write('x')\n" + ADD_OK),
    ("unicode", "s = 'héllo ✓'\nassert len(s) == 7\n" + ADD_OK),
    ("loops forever", "while True:\n    pass\n"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--code-eval", required=True,
                    help="folder with code_eval.py and execute.py (evaluate's metrics/code_eval)")
    args = ap.parse_args()
    folder = os.path.abspath(args.code_eval)
    load = evaluate.load
    evaluate.load = lambda name, *a, **k: load(folder if name == "code_eval" else name, *a, **k)
    he = load_module("humaneval/utils.py", "humaneval_utils")
    mb = load_module("mbpp/utils.py", "mbpp_utils")

    out = {"reference": "lm-eval " + lm_eval.__version__ + ", evaluate " + evaluate.__version__}

    # estimate_pass_at_k of the code_eval module the helpers loaded.
    est = he.compute_.__class__.__module__

    estimate = sys.modules[est].estimate_pass_at_k
    grid = []
    for n in list(range(1, 21)) + [32, 64, 100, 200]:
        for c in sorted({0, 1, 2, n // 3, n // 2, n - 1, n}):
            if not 0 <= c <= n:
                continue
            for k in (1, 2, 5, 8, 10, 16, 32, 64, 100):
                grid.append([n, c, k, float(estimate(n, [c], k)[0])])
    out["estimate_pass_at_k"] = grid

    # The create_test / extract_code filters.
    docs = [{"prompt": "def f(x):\n    \"\"\"Doc ✓.\"\"\"\n"}, {"prompt": ""}]
    resps = [["    return x\n", "    return 1\n```\nmore", "```", " no fence ``` a ``` b"],
             ["", "é```"]]
    out["humaneval_build_predictions"] = {
        "docs": docs, "resps": resps,
        "build_predictions": he.build_predictions(resps, docs),
        "build_predictions_instruct": he.build_predictions_instruct(resps, docs)}
    texts = [
        "def f():\n    return 1\n```\nrest",                     # the gen_prefix opened the block
        "python\ndef f(): pass\n```",
        "no block at all",
        "",
        "```",
        "text\n```python\ndef g():\n    return 2\n```\nand ```python\nsecond\n```",
        "```py3\nx = 1\n``` then ```\ny = 2\n```",
        "\n```python\ncode\n```",
        "héllo```λ\nunicode ✓\n```",
        "one\n\n```\n\ntwo\n\n```",
    ]
    out["mbpp_build_predictions"] = {"resps": [texts, texts[:2]],
                                     "out": mb.build_predictions([texts, texts[:2]], [])}

    # pass_at_k / pass_at_1, called as ConfigurableTask.process_results calls a metric callable.
    gold = TEST + "\ncheck(add)"
    runs = []
    for name, body in PROGRAMS:
        runs.append({"name": name, "gold": gold, "result": [body], "k": [1],
                     "pass_at_k": plain(he.pass_at_k(references=[gold], predictions=[[body]],
                                                     k=[1]))})
    mixed = [ADD_OK, ADD_BAD, ADD_OK, "syntax error (", ADD_BAD]
    for k in ([1], [1, 2, 5], [2, 8], 3):
        runs.append({"name": "five candidates, k=%s" % k, "gold": gold, "result": mixed,
                     "k": k, "pass_at_k": plain(he.pass_at_k(references=[gold],
                                                             predictions=[mixed], k=k))})
    runs.append({"name": "no candidates", "gold": gold, "result": [], "k": [1, 2],
                 "pass_at_k": plain(he.pass_at_k(references=[gold], predictions=[[]],
                                                 k=[1, 2]))})
    out["humaneval_pass_at_k"] = runs

    asserts = "assert add(2, 3) == 5\nassert add(1, 1) == 2\nassert add(0, 5) == 5"
    mb_runs = []
    for result in (ADD_OK, ADD_BAD, [ADD_OK], [ADD_BAD, ADD_OK], [""], "", "assert True"):
        mb_runs.append({"gold": asserts, "result": result,
                        "pass_at_1": plain(mb.pass_at_1(references=[asserts],
                                                        predictions=[result]))})
    mb_runs.append({"gold": "assert True", "result": [""],
                    "pass_at_1": plain(mb.pass_at_1(references=["assert True"],
                                                    predictions=[[""]]))})
    out["mbpp_pass_at_1"] = mb_runs
    out["mbpp_list_fewshot_samples"] = mb.list_fewshot_samples()

    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT), len(grid), "estimates,", len(runs) + len(mb_runs),
          "scored programs")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Goldens for leaderboard_math's `exact_match` (tests/tasks/functions/math_verify_goldens.jsonl).

The MATH-lighteval data is not available here, so the cases are the (gold, prediction) pairs of
math-verify's own test suite (github.com/huggingface/Math-Verify, tests/*.py, collected through
pytest's parametrisation) plus every string of them paired with itself. Each case is scored the
way the reference's leaderboard/math `process_results` scores a document:

    verify(parse(solution, [LatexExtractionConfig()]), parse(response))

with the case's gold as the document's `solution` and its prediction as the model's response; the
value math-verify returns is the expected value (not the test suite's own expectation, which used
other extraction configs).

The values must come from the reference as it is installed, `pip install "lm-eval[math]==0.4.13"`,
which pins antlr4-python3-runtime 4.11 (math-verify 0.9.0, latex2sympy2_extended 1.11.0, sympy);
with antlr 4.13 latex2sympy2_extended reads LaTeX percentages that under 4.11 it cannot
(docs/fidelity.md, "LaTeX percentages").

Usage: the cases were collected with pytest from math-verify's tests in a venv with pytest
    .venv/bin/python scripts/gen_math_verify_goldens.py /tmp/Math-Verify/tests \
        tests/tasks/functions/math_verify_goldens.jsonl
and their values re-scored in the reference's pinned environment (e.g. the venv
scripts/gen_standin_goldens.sh makes):
    .venv-standin/bin/python scripts/gen_math_verify_goldens.py --rescore \
        tests/tasks/functions/math_verify_goldens.jsonl
"""

import json
import os
import sys

from math_verify import LatexExtractionConfig, parse, verify

FILES = ["test_all.py", "test_boxed.py", "test_numina_cases.py", "test_open_thoughts.py",
         "test_strict.py", "test_yujianll.py"]


class Collect:
    def __init__(self):
        self.pairs = []

    def pytest_collection_modifyitems(self, items):
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            if isinstance(params.get("gold"), str) and isinstance(params.get("pred"), str):
                self.pairs.append((item.fspath.basename + "::" + item.originalname, params["gold"], params["pred"]))


def reference_exact_match(solution, response):
    # lm_eval/tasks/leaderboard/math/utils.py process_results
    return int(bool(verify(parse(solution, extraction_config=[LatexExtractionConfig()]), parse(response))))


def rescore(path):
    # Keeps the cases, recomputes the values in this interpreter's environment.
    cases = [json.loads(line) for line in open(path, encoding="utf-8")]
    changed = 0
    for c in cases:
        value = reference_exact_match(c["solution"], c["response"])
        changed += value != c["exact_match"]
        c["exact_match"] = value
    with open(path, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases re-scored, {changed} changed -> {path}", file=sys.stderr)


def main():
    if sys.argv[1] == "--rescore":
        return rescore(sys.argv[2])
    import pytest

    tests_dir, out_path = sys.argv[1], sys.argv[2]
    collector = Collect()
    pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"] +
                [os.path.join(tests_dir, f) for f in FILES], plugins=[collector])
    cases, seen = [], set()

    def add(source, solution, response):
        if (solution, response) in seen:
            return
        seen.add((solution, response))
        cases.append({"source": source, "solution": solution, "response": response,
                      "exact_match": reference_exact_match(solution, response)})

    for source, gold, pred in collector.pairs:
        add(source, gold, pred)
    for source, gold, pred in collector.pairs:
        add(source + " (gold, itself)", gold, gold)
        add(source + " (prediction, itself)", pred, pred)
    with open(out_path, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases from {len(collector.pairs)} test parameters -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()

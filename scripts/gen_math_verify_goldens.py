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

Usage (a venv with math-verify 0.9.0, sympy, antlr4-python3-runtime 4.13.2 and pytest):
    python3 -m venv .venv-mathverify && .venv-mathverify/bin/pip install math-verify pytest
    git clone https://github.com/huggingface/Math-Verify /tmp/Math-Verify   # tests/ only needed
    .venv-mathverify/bin/python scripts/gen_math_verify_goldens.py /tmp/Math-Verify/tests \
        tests/tasks/functions/math_verify_goldens.jsonl
"""

import json
import os
import sys

import pytest
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


def main():
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

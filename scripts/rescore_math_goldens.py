#!/usr/bin/env python3
"""Re-score the project's math-verify goldens in this interpreter's environment.

The goldens under tests/tasks/functions/ hold the value math-verify gave when they were made
(`exact_match`). Run with another environment's Python to see which cases depend on it, e.g. the
reference's own pins (`pip install "lm-eval[math]==0.4.13"`: antlr4-python3-runtime 4.11.0)
against the antlr 4.13.2 the goldens were made with (docs/fidelity.md, "LaTeX percentages"):

    .venv-standin/bin/python scripts/rescore_math_goldens.py \\
        tests/tasks/functions/math_verify_goldens.jsonl tests/tasks/functions/math_dataset_goldens.jsonl

Scores each case as the reference's leaderboard/math process_results does,
verify(parse(solution, [LatexExtractionConfig()]), parse(response)); math_dataset_goldens cases
stored as edits (no "response") are skipped. Prints the number of cases and those that differ.
"""

import json
import sys

from math_verify import LatexExtractionConfig, parse, verify


def score(solution: str, response: str):
    try:
        return int(bool(verify(parse(solution, extraction_config=[LatexExtractionConfig()]),
                               parse(response))))
    except Exception as e:  # noqa: BLE001  an exception is a result worth seeing here
        return f"error {type(e).__name__}"


def main():
    for path in sys.argv[1:]:
        cases = differ = 0
        solutions = {}
        for line in open(path, encoding="utf-8"):
            d = json.loads(line)
            if "problem" in d:  # math_dataset_goldens: the solution is on the problem's first row
                if "solution" in d:
                    solutions[d["problem"]] = d["solution"]
                else:
                    d["solution"] = solutions[d["problem"]]
            if "response" not in d or "exact_match" not in d:
                continue
            cases += 1
            s = score(d["solution"], d["response"])
            if s != d["exact_match"]:
                differ += 1
                print(f"  golden {d['exact_match']} now {s}: {json.dumps(d['solution'][-80:])} | "
                      f"{json.dumps(d['response'][:80])}")
        print(f"{path}: {cases} cases, {differ} differ")


if __name__ == "__main__":
    main()

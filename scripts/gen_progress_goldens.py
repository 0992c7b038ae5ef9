#!/usr/bin/env python3
"""Goldens for the progress line (src/core/progress.cpp) from tqdm itself: tqdm.format_meter, the
function that draws the reference's progress bars, at widths where the bar fits (ncols = columns
- 1: lm-eval keeps the last column free). Also tqdm's format_interval.
Output: tests/core/goldens/progress_tqdm.json.
Usage: <venv with tqdm, e.g. the reference's>/bin/python scripts/gen_progress_goldens.py
"""
import json
import os

from tqdm import tqdm

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core", "goldens",
                   "progress_tqdm.json")
LABEL = "Running loglikelihood requests"

# (done, total, elapsed seconds, tokens or -1, columns, unicode)
CASES = [
    (450, 1000, 12.3, 9988, 200, True),
    (450, 1000, 12.3, -1, 200, True),
    (450, 1000, 12.3, -1, 120, False),
    (3, 1000, 12.3, -1, 120, False),
    (0, 1000, 0.0, -1, 120, True),
    (1000, 1000, 4000.0, -1, 120, True),
    (1, 3, 0.5, -1, 100, True),
    (2, 3, 1.0, -1, 100, True),
    (999, 1000, 7.0, -1, 200, False),
    (5, 7, 36000.0, -1, 200, True),
    (123456, 1000000, 3600.0, 4000000, 160, True),
]

cases = []
for done, total, elapsed, tokens, columns, unicode in CASES:
    postfix = f"{int(tokens / elapsed)} tok/s" if tokens >= 0 and elapsed > 0 else None
    line = tqdm.format_meter(done, total, elapsed, ncols=columns - 1, prefix=LABEL,
                             ascii=not unicode, postfix=postfix)
    cases.append({"done": done, "total": total, "elapsed": elapsed, "tokens": tokens,
                  "columns": columns, "unicode": unicode, "line": line})

intervals = {str(t): tqdm.format_interval(t) for t in (0, 0.9, 59.99, 60, 61, 3599, 3600, 3661,
                                                       86399, 90061, 360000)}

with open(OUT, "w", encoding="utf-8") as f:
    json.dump({"label": LABEL, "bars": cases, "intervals": intervals}, f, indent=1,
              ensure_ascii=False)
    f.write("\n")

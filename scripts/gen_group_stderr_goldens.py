#!/usr/bin/env python3
"""Goldens for the reference's group stderr formulas (lm_eval 0.4.13 api/metrics.py):
pooled_sample_stderr, unweighted_mean_stderr, combined_sample_stderr and aggregate_subtask_metrics,
over subtask vectors of equal and unequal sizes. Output: tests/metrics/goldens/group_stderr.json
(floats as repr). Usage: <venv with lm_eval 0.4.13>/bin/python scripts/gen_group_stderr_goldens.py
"""
import json
import os

from lm_eval.api.metrics import (aggregate_subtask_metrics, combined_sample_stderr,
                                 pooled_sample_stderr, unweighted_mean_stderr)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "metrics", "goldens",
                   "group_stderr.json")
CASES = [
    ([0.05, 0.1], [100, 10], [0.5, 0.7]),
    ([0.0451, 0.0451, 0.0451], [50, 50, 50], [0.2, 0.4, 0.6]),
    ([0.01, 0.2, 0.033, 0.5], [1000, 7, 250, 3], [0.9, 0.1, 0.55, 0.0]),
    ([0.123456789], [42], [0.25]),
    ([0.0, 0.3], [2, 5], [1.0, 0.4]),
]
out = []
for se, sizes, metrics in CASES:
    out.append({
        "stderrs": se, "sizes": sizes, "metrics": metrics,
        "pooled": repr(float(pooled_sample_stderr(se, sizes))),
        "unweighted": repr(float(unweighted_mean_stderr(se))),
        "combined": repr(float(combined_sample_stderr(se, sizes, metrics=metrics))),
        "mean_weighted": repr(float(aggregate_subtask_metrics(metrics, sizes, True))),
        "mean_unweighted": repr(float(aggregate_subtask_metrics(metrics, sizes, False))),
    })
with open(OUT, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(len(out), "cases")

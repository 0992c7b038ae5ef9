#!/usr/bin/env python3
"""Goldens for str() of 1-D float64 numpy arrays (how the reference's handle_non_serializable
writes brier_score's softmax array into samples). Output: tests/core/goldens/numpy_array_str.json
as [{"values": [floats as repr], "str": str(np.array(values))}].
Usage: <venv with numpy>/bin/python scripts/gen_numpy_str_goldens.py
"""
import json
import os
import random

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core", "goldens",
                   "numpy_array_str.json")
rng = random.Random(31)
arrays = [[0.25, 0.75], [0.5, 0.25], [1e-05, 0.5], [1.0, 0.0], [0.1, 0.2, 0.7], [-0.5, 0.25],
          [1e9, 1.0], [0.0], [], [1 / 3, 2 / 3], [0.123456789012, 0.5], [2.5e-7, 0.99999975],
          [float("nan"), 0.5], [float("inf"), -1.0], [100.0, 0.2]]
for n in (2, 3, 4, 5, 8, 10, 16):
    for _ in range(6):
        lls = np.array([-10.0 * rng.random() for _ in range(n)])
        e = np.exp(lls - np.max(lls))
        arrays.append(list(e / e.sum()))
out = [{"values": [repr(float(v)) for v in a], "str": str(np.array(a, dtype=np.float64))}
       for a in arrays]
os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump({"numpy": np.__version__, "cases": out}, f, indent=1)
    f.write("\n")
print(len(out), "arrays;", out[20]["str"])

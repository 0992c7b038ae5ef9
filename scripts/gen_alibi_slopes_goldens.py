#!/usr/bin/env python3
"""transformers' ALiBi numbers for tests/models/hf/alibi_test.cpp: the per-head slopes of BLOOM
(_get_alibi_slopes, which Falcon's build_alibi_tensor repeats) and of MPT
(build_mpt_alibi_tensor, with its alibi_bias_max) for power-of-two and other head counts, and
Falcon's bfloat16-rounded bias (build_alibi_tensor) at positions up to 1000.

Usage (torch 2.15.0, transformers 5.23.0):
    python scripts/gen_alibi_slopes_goldens.py tests/fixtures/hf_arch/alibi_slopes.json
"""
import json
import sys

import torch
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
from transformers.models.falcon.modeling_falcon import build_alibi_tensor as falcon_alibi
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

HEADS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 71, 80, 96, 112, 128]


def floats(t):
    return [float(x) for x in t.float().flatten().tolist()]  # float32 values, exact in JSON


def main():
    out = {"bloom": {}, "mpt": {}, "falcon_bias": {}}
    for h in HEADS:
        out["bloom"][str(h)] = floats(_get_alibi_slopes(h, torch.device("cpu")))
        for bias_max in (8, 4, 16):
            # The bias of key 0 with a sequence of 2: -1 * slope.
            t = build_mpt_alibi_tensor(h, 2, alibi_bias_max=bias_max)
            out["mpt"][f"{h}:{bias_max}"] = floats(-t[:, 0, 0])
    positions = list(range(0, 40)) + [100, 255, 256, 257, 300, 511, 513, 777, 999, 1000]
    for h in (4, 6, 71):
        mask = torch.ones(1, 1001, dtype=torch.long)
        t = falcon_alibi(mask, h, torch.float32).view(h, -1)
        out["falcon_bias"][str(h)] = {"positions": positions,
                                      "bias": [floats(t[i, positions]) for i in range(h)]}
    out["meta"] = {"torch": torch.__version__, "generator": "scripts/gen_alibi_slopes_goldens.py"}
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, separators=(",", ":"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/activations.json: transformers' feed-forward activations (ACT2FN's
silu, gelu, gelu_pytorch_tanh, gelu_new, gelu_fast, relu and modeling_bloom's bloom_gelu_forward)
applied by torch to every finite float16 and every finite bfloat16 value, for the C++ test
HfActivation (tests/models/hf/activation_test.cpp), which applies src/models/hf/activation.cpp
to the same values.

Per activation and dtype the file holds the FNV-1a 64 hash of the outputs' 16-bit patterns (in
the order of the inputs' bit patterns 0x0000..0xFFFF, non-finite inputs left out) and the first
64 outputs where torch's bits differ from the function computed in float32 and rounded once,
which the test checks one by one: those are the values that one rounding at the end gets wrong.

Environment: torch 2.15.0 (CPU, AVX2), transformers 5.23.0.
Usage: python scripts/gen_activation_goldens.py
"""
import json
import os

import numpy as np
import torch
from transformers.activations import ACT2FN
from transformers.models.bloom.modeling_bloom import bloom_gelu_forward

from gen_half_gemm_goldens import bits, fnv1a64  # one hash and bit view for the half goldens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "hf_arch", "activations.json")
NAMES = ("silu", "gelu", "gelu_pytorch_tanh", "gelu_new", "gelu_fast", "relu", "bloom")
DTYPES = ("float16", "bfloat16")


def inputs(dtype):
    bits = torch.arange(0, 1 << 16, dtype=torch.int32).to(torch.int16)
    x = bits.view(getattr(torch, dtype))
    return x[torch.isfinite(x.float())]


def fn(name):
    return bloom_gelu_forward if name == "bloom" else ACT2FN[name]


def main():
    cases = []
    for dtype in DTYPES:
        x = inputs(dtype)
        for name in NAMES:
            with torch.no_grad():
                got = fn(name)(x)
                once = fn(name)(x.float()).to(x.dtype)
            g, o = bits(got), bits(once)
            where = np.nonzero(g != o)[0]
            cases.append({"name": name, "dtype": dtype, "inputs": int(x.numel()),
                          "hash": fnv1a64(got), "differ_from_once": int(where.size),
                          "first_differing": [[int(j), int(g[j])] for j in where[:64]]})
            print(dtype, name, "outputs differing from float32 rounded once:", where.size)
    meta = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "script": "scripts/gen_activation_goldens.py"}
    with open(OUT, "w") as f:
        json.dump({"meta": meta, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()

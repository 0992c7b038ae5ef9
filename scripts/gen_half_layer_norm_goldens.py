#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/half_layer_norm.json: torch's own float16/bfloat16 LayerNorm on
the CPU (F.layer_norm with weight and bias, and without) and transformers' CohereLayerNorm
formula (float32 mean and variance by torch.mean, rsqrt, the weight in float32, one rounding:
cases with "formula") for the C++ test HalfLayerNorm (tests/models/hf/half_layer_norm_test.cpp),
which computes the same rows with src/models/hf/half_layer_norm.cpp.

Inputs, weights and biases are made from the element index and a seed on both sides
(gen_half_gemm_goldens.py's operand, scaled so that the rows' spreads vary); per case the file
holds the hash of the output's 16-bit patterns and every output where torch's bits differ from
F.layer_norm computed in float32 and rounded once, which the test checks one by one. "sums"
holds torch.sum's float32 row sums (dim -1, one thread) of rows x = a + b * 2^-11 (a, b operands:
every add rounds), as float32 bit patterns, for the test HalfLayerNorm.InnerSumIsTorchs, which
checks half_layer_norm.cpp's torch_inner_sum (the formula's sums) on its own.

Environment: torch 2.15.0 (CPU, AVX2: on an AVX-512 machine set ATEN_CPU_CAPABILITY=avx2). Usage: python scripts/gen_half_layer_norm_goldens.py
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from gen_half_gemm_goldens import bits, fnv1a64, operand

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "hf_arch", "half_layer_norm.json")
# (rows, width, affine): widths below one 16-value vector, with tails, one chunk, several chunks
# (the moments' cascade), and no weight or bias.
SHAPES = [(24, 7, True), (24, 37, True), (32, 64, True), (32, 100, True), (16, 256, True),
          (8, 520, True), (4, 2048, True), (4, 5000, True), (16, 64, False)]
DTYPES = ("float16", "bfloat16")
# torch.sum's inner-sum cascade: below one 8-float vector (its scalar row_sum), around 4 vectors (its accumulators), and
# the cascade's levels (SumKernel.cpp's multi_row_sum chunks) with leftovers.
SUM_WIDTHS = [1, 3, 4, 5, 6, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000,
              1024, 4095, 4096, 4097, 8192, 10007, 30000]
SUM_ROWS = 3


def sum_cases():
    cases, sequential_apart = [], 0
    for k, n in enumerate(SUM_WIDTHS):
        a = operand([SUM_ROWS, n], 100 + 2 * k, "float32")
        b = operand([SUM_ROWS, n], 101 + 2 * k, "float32")
        x = a + b * 2.0 ** -11  # float32 adds: rounded inputs
        got = x.sum(-1)
        for r in range(SUM_ROWS):  # a plain left-to-right float32 sum, to show the order matters
            acc = np.float32(0)
            for v in x[r].numpy():
                acc = np.float32(acc + v)
            sequential_apart += int(acc != got[r].item())
        cases.append({"width": n, "rows": SUM_ROWS, "seeds": [100 + 2 * k, 101 + 2 * k],
                      "bits": [int(v) for v in got.view(torch.int32).numpy().astype(np.uint32)]})
    return cases, sequential_apart


def main():
    torch.set_num_threads(1)  # a row's sum is never split across threads
    cases, differ, apart = [], 0, 0
    for dtype in DTYPES:
        for s, (rows, n, affine) in enumerate(SHAPES):
            x = operand([rows, n], 3 * s + 1, dtype) * 64  # exact: a power of two
            w = operand([n], 3 * s + 2, dtype) * 16 + 1 if affine else None
            b = operand([n], 3 * s + 3, dtype) if affine else None
            got = F.layer_norm(x, (n,), w, b, 1e-5)
            once = F.layer_norm(x.float(), (n,), None if w is None else w.float(),
                                None if b is None else b.float(), 1e-5).to(x.dtype)
            g, o = bits(got), bits(once)
            where = np.nonzero(g != o)[0]
            differ += where.size
            cases.append({"dtype": dtype, "rows": rows, "width": n, "affine": affine,
                          "seeds": [3 * s + 1, 3 * s + 2, 3 * s + 3], "hash": fnv1a64(got),
                          "differ_from_f32": [[int(j), int(g[j])] for j in where[:100]]})
            # CohereLayerNorm.forward (transformers' modeling_cohere.py), weight only.
            xf = x.float()
            mean = xf.mean(-1, keepdim=True)
            var = (xf - mean).pow(2).mean(-1, keepdim=True)
            y = (xf - mean) * torch.rsqrt(var + 1e-5)
            got = (y if w is None else w.float() * y).to(x.dtype)
            once = F.layer_norm(xf, (n,), None if w is None else w.float(), None, 1e-5).to(x.dtype)
            g, o = bits(got), bits(once)
            where = np.nonzero(g != o)[0]
            differ += where.size
            apart += int((g != bits(F.layer_norm(x, (n,), w, None, 1e-5))).sum())
            cases.append({"dtype": dtype, "rows": rows, "width": n, "affine": affine,
                          "formula": True, "seeds": [3 * s + 1, 3 * s + 2, 3 * s + 3],
                          "hash": fnv1a64(got),
                          "differ_from_f32": [[int(j), int(g[j])] for j in where[:100]]})
    meta = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "script": "scripts/gen_half_layer_norm_goldens.py", "eps": 1e-5,
            "x": "operand * 64", "weight": "operand * 16 + 1", "bias": "operand"}
    sums, sequential_apart = sum_cases()
    with open(OUT, "w") as f:
        json.dump({"meta": meta, "cases": cases, "sums": sums}, f, separators=(",", ":"))
        f.write("\n")
    print(OUT, os.path.getsize(OUT), "bytes;", differ, "outputs differ from float32 rounded once;",
          apart, "of the formula's from F.layer_norm in the dtype;", sequential_apart, "of",
          len(sums) * SUM_ROWS, "torch.sum rows differ from a left-to-right float32 sum")


if __name__ == "__main__":
    main()

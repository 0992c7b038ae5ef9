#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/half_gemm.json: torch's own float16/bfloat16 products on the CPU
(F.linear and torch.matmul) for the C++ test HalfGemm (tests/models/hf/half_gemm_test.cpp),
which computes the same products with src/models/hf/half_gemm.cpp.

The operands are not stored: both sides make them from the element index and a seed,
    u = (i * 2654435761 + seed * 40503 + 12345) mod 2^32
    value = (((u >> 24) & 255) - 128) * 2^(((u >> 8) & 15) mod 11 - 15)
which is exact in both dtypes and spreads the magnitudes over 2^-15 .. 2^2, so that the float32
sums are inexact and their order shows. Per case the file holds the FNV-1a 64 hash of the
output's 16-bit patterns (row-major, little-endian), and every output where torch's bits differ
from the float32 product rounded once (`(a.float() @ b.float()).to(dtype)`: the order the float32
path's BLAS sums in), which the test checks one by one: those are the outputs an order other than
torch's gets wrong.

Environment: torch 2.15.0 (CPU, AVX2). Usage: python scripts/gen_half_gemm_goldens.py
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "hf_arch", "half_gemm.json")

# linear: x [m, k] (or [2, m/2, k]), w [n, k], bias [n] or none. matmul: a [*batch, m, k] times
# b [*batch, k, n], b either the transpose of a contiguous [*batch, n, k] (q·kᵀ) or contiguous
# (p·v); bmm's own loop takes the small ones (k·m·n < 400), BLAS-sized ones the gemm.
LINEAR = [(48, 333, 96, True, 2), (32, 256, 64, False, 2), (40, 100, 50, True, 2),
          (17, 37, 24, False, 2), (8, 1024, 64, False, 2), (1, 256, 200, False, 2),
          (1, 64, 300, True, 2), (24, 64, 192, False, 3), (256, 512, 256, True, 2)]
MATMUL = [((2, 4), 24, 64, 20, True), ((2, 4), 24, 20, 64, False), ((1, 2), 1, 16, 20, True),
          ((1, 2), 1, 20, 16, False), ((3,), 7, 8, 5, True), ((3,), 7, 5, 8, False),
          ((2, 2), 1, 64, 40, True), ((2, 2), 1, 40, 64, False), ((2,), 33, 100, 33, True),
          ((2,), 33, 33, 100, False), ((4, 4), 64, 64, 64, True),
          ((4, 4), 64, 64, 64, False), ((400,), 1, 64, 6, True), ((400,), 1, 6, 64, False),
          ((300,), 2, 48, 4, True), ((500,), 1, 32, 12, True)]
DTYPES = ("float16", "bfloat16")


def operand(shape, seed, dtype):
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    u = (i * np.uint64(2654435761) + np.uint64(seed * 40503 + 12345)) % np.uint64(2 ** 32)
    mant = ((u >> np.uint64(24)) & np.uint64(255)).astype(np.int64) - 128
    exp = ((u >> np.uint64(8)) & np.uint64(15)).astype(np.int64) % 11 - 15
    v = torch.from_numpy(np.ldexp(mant.astype(np.float64), exp).reshape(shape))
    t = v.to(getattr(torch, dtype))
    assert torch.equal(t.double(), v), "operand not exact in " + dtype
    return t


def fnv1a64(t):
    h = 0xcbf29ce484222325
    for byte in t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def bits(t):
    return t.reshape(-1).view(torch.int16).numpy().astype(np.int64) & 0xFFFF


def record(case, got, f32):
    g, f = bits(got), bits(f32)
    where = np.nonzero(g != f)[0]
    case.update(outputs=int(g.size), hash=fnv1a64(got),
                differ_from_f32=[[int(j), int(g[j])] for j in where],
                first=[int(x) for x in g[:4]])
    return len(where)


def main():
    cases, differ = [], {d: 0 for d in DTYPES}
    for dtype in DTYPES:
        for s, (m, k, n, bias, dims) in enumerate(LINEAR):
            xs = [2, m // 2, k] if dims == 3 else [m, k]
            x, w = operand(xs, 3 * s + 1, dtype), operand([n, k], 3 * s + 2, dtype)
            b = operand([n], 3 * s + 3, dtype) if bias else None
            got = F.linear(x, w, b)
            f32 = F.linear(x.float(), w.float(), None if b is None else b.float()).to(x.dtype)
            c = {"op": "linear", "dtype": dtype, "x": xs, "w": [n, k], "bias": bias,
                 "seeds": [3 * s + 1, 3 * s + 2, 3 * s + 3]}
            differ[dtype] += record(c, got, f32)
            cases.append(c)
        for s, (batch, m, k, n, transposed) in enumerate(MATMUL):
            a = operand([*batch, m, k], 100 + 2 * s, dtype)
            if transposed:
                b = operand([*batch, n, k], 101 + 2 * s, dtype).transpose(-1, -2)
            else:
                b = operand([*batch, k, n], 101 + 2 * s, dtype)
            got = torch.matmul(a, b)
            f32 = torch.matmul(a.float(), b.float()).to(a.dtype)
            c = {"op": "matmul", "dtype": dtype, "a": [*batch, m, k], "b": [*batch, k, n],
                 "transposed": transposed, "seeds": [100 + 2 * s, 101 + 2 * s]}
            differ[dtype] += record(c, got, f32)
            cases.append(c)
    # The test can fail only where some output depends on the order.
    for dtype, n in differ.items():
        assert n > 0, f"no {dtype} output differs from the float32 product rounded once"
        print(f"{dtype}: {n} outputs differ from the float32 product rounded once")
    out = {"meta": {"torch": torch.__version__, "device": "cpu",
                    "script": "scripts/gen_half_gemm_goldens.py"}, "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()

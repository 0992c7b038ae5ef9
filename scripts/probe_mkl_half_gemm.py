#!/usr/bin/env python3
"""The order in which MKL's half-input gemm (cblas_gemm_f16f16f32 / cblas_gemm_bf16bf16f32, the
one torch's CPU flash attention calls) adds each output's products, found from its outputs alone.

A product of two float16 (or bfloat16) values is exact in float32, so an output's value depends
only on the tree of additions. For every pair of products (p, q) the script makes product p
+2^30, product q -2^30 and every other product a tiny unit (2^-9 float16, 2^-25 bfloat16), so
small that it vanishes when added to +-2^30: the output then counts the products not yet added
into either big one when the two meet, which gives the size of the subtree in which p and q meet.
Those sizes for all pairs determine the tree. With BETA 1 the output buffer's initial value is one
more leaf (index K). Printed per distinct tree: how many outputs use it and the tree, chains of
consecutive products as [i..j].

This is how reduced_attention.cpp's orders were found (docs/fidelity.md, "torch's flash attention,
block by block"). Layouts as the flash kernel calls them: "qk" is C = A^T B (m keys by n query
rows over k), "pv" is C = A B (m head dimensions by n query rows over k keys). OFFSET places the
output buffer that many floats past a 64-byte boundary. MKL runs on one thread here, as it does
inside torch's parallel region.

Environment: torch 2.15.0 (pip wheel, MKL 2024.2) on an AMD CPU (MKL's generic code path).
Usage: python scripts/probe_mkl_half_gemm.py LAYOUT DTYPE M N K [OFFSET [BETA]]
e.g. `qk float16 5 1 16` (one query over five keys: rows 0-3 in 4 lanes, row 4 in two
registers of 4 lanes), `pv float16 8 6 12 1` (the first three outputs of each column in the
small kernel's other order).
"""
import ctypes
import os
import sys

import numpy as np
import torch

COL, NOTRANS, TRANS = 102, 111, 112


def gemm_fn(dtype):
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    fn = getattr(lib, "cblas_gemm_f16f16f32" if dtype == "float16" else "cblas_gemm_bf16bf16f32")
    fn.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                                        ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                        ctypes.c_void_p, ctypes.c_int]
    return fn


def as_bits(x, dtype):
    return torch.tensor(x, dtype=torch.float32).to(getattr(torch, dtype)).view(torch.int16) \
        .numpy().copy()


def call(fn, layout, dtype, m, n, k, pattern, offset, c0):
    big = np.full(k, 2.0 ** 15, np.float32)
    if layout == "qk":
        a, lda, b, ldb, ta = as_bits(np.tile(pattern, (m, 1)), dtype), k, \
            as_bits(np.tile(big, (n, 1)), dtype), k, TRANS
    else:
        a, lda, b, ldb, ta = as_bits(np.tile(big[:, None], (1, m)), dtype), m, \
            as_bits(np.tile(pattern, (n, 1)), dtype), k, NOTRANS
    buf = np.zeros(m * n + 64, np.float32)
    start = (-(buf.ctypes.data // 4)) % 16 + offset
    if c0 is not None:
        buf[start:start + m * n] = c0.reshape(-1)
    fn(COL, ta, NOTRANS, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
       0.0 if c0 is None else 1.0, buf.ctypes.data + 4 * start, m)
    return buf[start:start + m * n].reshape(n, m)


def meeting_sizes(layout, dtype, m, n, k, offset, beta):
    fn = gemm_fn(dtype)
    tiny = 2.0 ** -24 if dtype == "float16" else 2.0 ** -40
    unit = tiny * 2.0 ** 15
    leaves = k + (1 if beta else 0)
    size = np.zeros((n, m, leaves, leaves), np.int64)
    for p in range(leaves):
        for q in range(p + 1, leaves):
            pattern = np.full(k, tiny, np.float32)
            c0 = np.full((n, m), unit, np.float32) if beta else None
            pattern[p] = 2.0 ** 15
            if q < k:
                pattern[q] = -2.0 ** 15
            else:
                c0[:] = -2.0 ** 30
            left = call(fn, layout, dtype, m, n, k, pattern, offset, c0) / unit
            assert np.all(np.abs(left - np.round(left)) < 1e-6), (p, q)
            size[:, :, p, q] = size[:, :, q, p] = leaves - np.round(left).astype(np.int64)
    return size


def tree(sizes):
    """The binary tree whose subtree where leaves p and q meet has sizes[p][q] leaves."""
    n = sizes.shape[0]
    parent, members, node = list(range(n)), {i: {i} for i in range(n)}, {i: i for i in range(n)}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    for s, p, q in sorted((sizes[p][q], p, q) for p in range(n) for q in range(p + 1, n)):
        a, b = find(p), find(q)
        if a == b:
            continue
        if len(members[a]) + len(members[b]) != s:
            return None
        parent[b] = a
        node[a] = (node[a], node[b])
        members[a] |= members.pop(b)
        del node[b]
    return node[find(0)]


def show(t):
    def chain(t):  # (first, last) when t adds consecutive leaves one after another
        if isinstance(t, int):
            return (t, t)
        c = chain(t[0])
        return (c[0], t[1]) if c and isinstance(t[1], int) and t[1] == c[1] + 1 else None
    c = chain(t)
    if c:
        return str(c[0]) if c[0] == c[1] else f"[{c[0]}..{c[1]}]"
    return "(" + show(t[0]) + " + " + show(t[1]) + ")"


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    layout, dtype = sys.argv[1], sys.argv[2]
    m, n, k = (int(a) for a in sys.argv[3:6])
    offset = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    beta = len(sys.argv) > 7 and sys.argv[7] == "1"
    torch.set_num_threads(1)
    sizes = meeting_sizes(layout, dtype, m, n, k, offset, beta)
    seen = {}
    for j in range(n):
        for i in range(m):
            t = tree(sizes[j, i])
            seen.setdefault(show(t) if t is not None else "not a tree", []).append((j, i))
    for t, where in seen.items():
        print(f"{len(where)} outputs (column, row), e.g. {where[:4]}: {t}")


if __name__ == "__main__":
    main()

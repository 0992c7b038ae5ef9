#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/half_sdpa.json: torch's own float16/bfloat16
F.scaled_dot_product_attention on the CPU (its flash kernel over MKL's half-input gemm) for the
C++ test HalfSdpa (tests/models/hf/half_sdpa_test.cpp), which computes the same calls with
src/models/hf/reduced_attention.cpp's flash_attention_reduced.

The cases cover the kernel's shapes that pick other summation orders: decoding steps (one query:
MKL's small kernel, whose p·v outputs before a 16-byte boundary of torch's per-thread buffer
take another order), over one block of keys and over two (the running sum's rescaling), prompts
whose last query block has at most 3 rows or whose keys are at most 11, prompts of 33 and more
keys (the exponentials' three accumulators), of 192 rows and more (64-row blocks, p·v
contractions split in halves), a head size of 256 (q·k split) and of 8, and a float mask
(ALiBi's bias, fused into the scaling). q, k and v are gen_half_gemm_goldens.py's operands
(made from the element index and a seed on both sides), q times 4.

torch runs on 2 threads, recorded in "meta": the thread that computes a block places its buffer,
so the test passes the same count. Per case the file holds the hash of the output's 16-bit
patterns, how many outputs differ from the float32 attention rounded once and the first of them
(which the test checks one by one), and the hash of the rows' logsumexp (float32), which shows
a sum one ulp off that the outputs' rounding hides. "gemm" holds MKL's half-input gemm on its
own (from ctypes into the MKL that torch links), float32 outputs, in the kernel's two layouts;
"math" torch.matmul of float32 tensors as SDPA's math path (MLA) calls it.

Environment: torch 2.15.0 (pip wheel, MKL 2024.2), an AMD CPU (MKL's generic code path) with
ATEN_CPU_CAPABILITY=avx2. Usage: ATEN_CPU_CAPABILITY=avx2 python scripts/gen_half_sdpa_goldens.py
"""
import ctypes
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from gen_half_gemm_goldens import bits, fnv1a64, operand

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "hf_arch", "half_sdpa.json")
THREADS = 2
# (name, heads, query rows, keys, head size, kind): "decode" one query over all keys, "causal" a
# prompt (is_causal), "alibi" a prompt with a causal float mask holding a bias.
CASES = [
    ("decode_37", 64, 1, 37, 16, "decode"),
    ("decode_two_key_blocks", 32, 1, 600, 16, "decode"),
    ("decode_head_64", 32, 1, 45, 64, "decode"),
    ("decode_1000", 64, 1, 1000, 16, "decode"),
    ("prompt_9", 4, 9, 9, 16, "causal"),
    ("prompt_35", 4, 35, 35, 16, "causal"),
    ("prompt_40", 16, 40, 40, 16, "causal"),
    ("prompt_200", 2, 200, 200, 16, "causal"),
    ("prompt_head_256", 2, 20, 20, 256, "causal"),
    ("prompt_head_8", 4, 30, 30, 8, "causal"),
    ("prompt_alibi", 8, 24, 24, 24, "alibi"),
]
# The first outputs (in order) of each case whose bits differ from the float32 attention's.
LISTED = 64
DTYPES = ("float16", "bfloat16")
# MKL's half-input gemm on its own (float32 outputs, every bit), in the flash kernel's two
# layouts: q·k (A transposed: m keys by n query rows over the head size k) and p·v (m head
# dimensions by n query rows over k keys; `offset` places the output buffer 0-3 floats past a
# 64-byte boundary, `beta` accumulates onto it).
QK_SHAPES = [(5, 1, 16), (13, 1, 13), (40, 1, 64), (40, 2, 64), (40, 3, 37), (7, 4, 12),
             (11, 11, 16), (12, 12, 16), (40, 32, 64), (200, 64, 64), (30, 8, 256), (50, 1, 256),
             (1, 5, 16), (45, 40, 200)]
PV_SHAPES = [(16, 1, 40, 1, 0), (64, 1, 100, 2, 0), (16, 2, 24, 3, 0), (13, 3, 16, 0, 0),
             (7, 4, 12, 0, 0), (8, 6, 30, 1, 0), (64, 4, 200, 0, 0), (64, 8, 450, 0, 1),
             (16, 64, 300, 0, 1), (64, 1, 7, 3, 1), (80, 1, 45, 2, 1), (16, 2, 40, 1, 1)]


def inputs(k_case, heads, t, s, d, dtype):
    q = operand([1, heads, t, d], 3 * k_case, dtype) * 4
    k = operand([1, heads, s, d], 3 * k_case + 1, dtype)
    v = operand([1, heads, s, d], 3 * k_case + 2, dtype)
    return q, k, v


def bias_of(heads, s, dtype):
    # ALiBi-like: slope 2^-(h+1) times the key's distance back from the last one, in the dtype.
    dist = torch.arange(s, dtype=torch.float64) - (s - 1)
    slopes = torch.tensor([2.0 ** -(h + 1) for h in range(heads)], dtype=torch.float64)
    return (slopes.view(1, heads, 1, 1) * dist.view(1, 1, 1, s)).to(getattr(torch, dtype))


def attention(q, k, v, kind, dtype):
    """The output and, from the flash kernel's own entry point, each row's logsumexp (its running
    maximum plus the log of its sum, float32: the sums' order shows in it)."""
    if kind == "decode":
        mask, causal = None, False
    elif kind == "causal":
        mask, causal = None, True
    else:
        t, s = q.shape[2], k.shape[2]
        allow = torch.ones(t, s, dtype=torch.bool).tril(s - t)
        b = bias_of(q.shape[1], s, dtype)
        mask, causal = torch.where(allow, b, torch.tensor(float("-inf"), dtype=b.dtype)), False
    if q.dtype == torch.float32:
        m = mask.float() if mask is not None else None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal), None
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, causal, attn_mask=mask)
    assert torch.equal(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                            is_causal=causal))
    return out, lse


def mkl_gemm(dtype, ta, m, n, k, a, lda, b, ldb, c0, offset):
    """cblas_gemm_{f16f16f32,bf16bf16f32} (column-major, alpha 1; beta 1 with c0) from the MKL
    that torch links, onto a buffer `offset` floats past a 64-byte boundary."""
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    fn = getattr(lib, "cblas_gemm_f16f16f32" if dtype == "float16" else "cblas_gemm_bf16bf16f32")
    fn.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                                        ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                        ctypes.c_void_p, ctypes.c_int]
    buf = np.zeros(m * n + 32, np.float32)
    start = (-(buf.ctypes.data // 4)) % 16 + offset
    if c0 is not None:
        buf[start:start + m * n] = c0.reshape(-1)
    av = a.contiguous().view(torch.int16).numpy().copy()
    bv = b.contiguous().view(torch.int16).numpy().copy()
    fn(102, 112 if ta else 111, 111, m, n, k, 1.0, av.ctypes.data, lda, bv.ctypes.data, ldb,
       1.0 if c0 is not None else 0.0, buf.ctypes.data + 4 * start, m)
    return buf[start:start + m * n].copy()


def fnv_bytes(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# torch.matmul of float32 tensors (SDPA's math path, MLA): (layout, rows R, columns C, contraction
# K): the loop under 400 multiply-adds, MKL's packed kernel (fused multiply-adds, a contraction
# over 192 split), its small kernel for q·k of 2-3 rows or at most 11 keys, its gemv for one
# query's q·k, one row's p·v.
MATH_SHAPES = [("qk", 20, 20, 16), ("qk", 7, 7, 16), ("qk", 3, 20, 64), ("qk", 4, 5, 16),
               ("qk", 2, 3, 8), ("qk", 16, 300, 24), ("pv", 7, 12, 7), ("pv", 20, 12, 20),
               ("pv", 16, 12, 300), ("pv", 1, 12, 100), ("pv", 4, 12, 8), ("qk", 1, 30, 16),
               ("qk", 1, 31, 24), ("qk", 1, 31, 20), ("qk", 1, 45, 32), ("qk", 1, 40, 12)]


def math_cases():
    """Inputs: operands in float32 times 0.7 (inexact products, so that fused multiply-adds show);
    q·k multiplies queries [1, 2, R, K] by keys [1, 2, C, K] transposed, p·v [1, 2, R, K] by
    [1, 2, K, C]."""
    out = []
    for c, (layout, r, cols, k) in enumerate(MATH_SHAPES):
        a = operand([1, 2, r, k], 400 + 2 * c, "float32") * 0.7
        if layout == "qk":
            keys = operand([1, 2, cols, k], 401 + 2 * c, "float32") * 0.7
            got = torch.matmul(a, keys.transpose(-1, -2))
        else:
            b = operand([1, 2, k, cols], 401 + 2 * c, "float32") * 0.7
            got = torch.matmul(a, b)
        g = got.contiguous().numpy()
        out.append({"layout": layout, "rows": r, "cols": cols, "k": k,
                    "seeds": [400 + 2 * c, 401 + 2 * c],
                    "hash": fnv_bytes(g.astype("<f4").tobytes())})
    return out


def gemm_record(case, got, sequential):
    where = np.nonzero(got.view(np.uint32) != sequential.view(np.uint32))[0]
    case.update(hash=fnv_bytes(got.astype("<f4").tobytes()), differ_from_sequential=len(where),
                first_differ=[[int(j), int(got.view(np.uint32)[j])] for j in where[:8]])
    return len(where)


def gemm_cases():
    out, apart = [], 0
    for dtype in DTYPES:
        for c, (m, n, k) in enumerate(QK_SHAPES):
            a = operand([m, k], 200 + 2 * c, dtype)  # keys
            b = operand([n, k], 201 + 2 * c, dtype)  # query rows
            got = mkl_gemm(dtype, True, m, n, k, a, k, b, k, None, 0)
            seq = np.zeros((n, m), np.float32)
            for l in range(k):
                seq = (seq + (b[:, l:l + 1].float() * a[:, l].float()).numpy()).astype(np.float32)
            case = {"layout": "qk", "dtype": dtype, "m": m, "n": n, "k": k,
                    "seeds": [200 + 2 * c, 201 + 2 * c]}
            apart += gemm_record(case, got, seq.reshape(-1))
            out.append(case)
        for c, (m, n, k, offset, beta) in enumerate(PV_SHAPES):
            v = operand([k, m], 300 + 3 * c, dtype)
            p = operand([n, k], 301 + 3 * c, dtype)
            c0 = operand([n, m], 302 + 3 * c, "float32").numpy() if beta else None
            got = mkl_gemm(dtype, False, m, n, k, v, m, p, k, c0, offset)
            seq = c0.copy() if beta else np.zeros((n, m), np.float32)
            for i in range(k):
                seq = (seq + (p[:, i:i + 1].float() * v[i].float()).numpy()).astype(np.float32)
            case = {"layout": "pv", "dtype": dtype, "m": m, "n": n, "k": k, "offset": offset,
                    "beta": bool(beta), "seeds": [300 + 3 * c, 301 + 3 * c, 302 + 3 * c]}
            apart += gemm_record(case, got, seq.reshape(-1))
            out.append(case)
    return out, apart


def main():
    torch.set_num_threads(THREADS)
    out, differ = [], {d: 0 for d in DTYPES}
    for k_case, (name, heads, t, s, d, kind) in enumerate(CASES):
        for dtype in DTYPES:
            q, k, v = inputs(k_case, heads, t, s, d, dtype)
            got, lse = attention(q, k, v, kind, dtype)
            f32 = attention(q.float(), k.float(), v.float(), kind, dtype)[0].to(got.dtype)
            g, f = bits(got), bits(f32)
            where = [int(j) for j in (g != f).nonzero()[0]]
            differ[dtype] += len(where)
            out.append({"name": name, "dtype": dtype, "heads": heads, "rows": t, "keys": s,
                        "head_size": d, "kind": kind, "seeds": [3 * k_case, 3 * k_case + 1,
                                                                  3 * k_case + 2],
                        "outputs": int(g.size), "hash": fnv1a64(got), "differ": len(where),
                        "differ_from_f32": [[j, int(g[j])] for j in where[:LISTED]],
                        "lse_hash": fnv_bytes(lse.contiguous().numpy().astype("<f4").tobytes())})
    # Inside torch's kernel MKL runs on the calling thread (an OpenMP parallel region); called
    # from here it would split the product over its own threads.
    torch.set_num_threads(1)
    gemm, gemm_apart = gemm_cases()
    torch.set_num_threads(THREADS)  # the math path's matmuls run outside any parallel region
    math = math_cases()
    meta = {"torch": torch.__version__, "threads": THREADS, "gemm_differ_from_sequential": gemm_apart,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "q_scale": 4, "bias": "slope 2^-(h+1) x (key - last key), in the dtype",
            "differ_from_f32": differ}
    with open(OUT, "w") as f:
        json.dump({"meta": meta, "cases": out, "gemm": gemm, "math": math}, f,
                  separators=(",", ":"))
        f.write("\n")
    print(json.dumps(meta))


if __name__ == "__main__":
    main()

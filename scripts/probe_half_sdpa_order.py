#!/usr/bin/env python3
"""A Python model of torch 2.15's float16/bfloat16 CPU flash attention (FlashAttentionKernel.cpp,
cpu_flash_attention over MKL's cblas_gemm_f16f16f32 / cblas_gemm_bf16bf16f32), the one that
src/models/hf/reduced_attention.cpp computes in C++, checked output by output against
torch.nn.functional.scaled_dot_product_attention on random heads.

What the model holds (docs/fidelity.md, "torch's flash attention, block by block"):
- the call's query blocks (32, 64 or 256 rows by its length) and key blocks (512), the thread
  that runs each block in at::parallel_for and where its per-thread buffer puts the output row;
- MKL's summation orders, found with scripts/probe_mkl_half_gemm.py: q·k and p·v blocks with at
  most 3 query rows or at most 11 keys (p·v: head dimensions) in MKL's small kernel (4-float
  lanes; p·v outputs before a 16-byte boundary in another order; bfloat16 one-row blocks in
  MKL's gemv), larger ones in its packed kernel (one product after another, a contraction over
  192 split in halves or blocks of 192);
- the scores' scaling, fexp_u20 over whole 8-float vectors and ::exp in double over the rest,
  the exponentials' sum in the kernel's three vector accumulators (read from torch's AVX2
  machine code), the running sum's fused multiply-add across key blocks.

Environment: torch 2.15.0 (pip wheel, MKL 2024.2) on an AMD CPU (MKL takes its generic code path
there; an Intel CPU gets other MKL kernels); on an AVX-512 machine set ATEN_CPU_CAPABILITY=avx2.
Usage: python scripts/probe_half_sdpa_order.py [DTYPE [T S D H ...]]   (default: a set of
shapes in both dtypes). T = S: a causal prompt; T = 1: a decoding step over S keys.
Measured (7 Dec 2026, this model): 0 outputs apart from torch on every shape tried, prompts of
9 to 800 rows, decoding steps over 7 to 1,000 keys, head sizes 8 to 256, both dtypes.
"""
import ctypes
import sys

import numpy as np
import torch
import torch.nn.functional as F

f32 = np.float32
_libm = ctypes.CDLL("libm.so.6")
_libm.expf.restype = ctypes.c_float
_libm.expf.argtypes = [ctypes.c_float]


def expf(x):  # glibc's expf, as torch's std::exp of a float calls it
    return f32(_libm.expf(float(x))) if np.isfinite(x) else f32(0.0 if x < 0 else np.inf)


def fma(a, b, c):  # float32 fused multiply-add through extended precision
    return f32(np.longdouble(a) * np.longdouble(b) + np.longdouble(c))


def fexp_u20(x):  # Vectorized<float>::fexp_u20, elementwise
    x = np.asarray(x, f32)
    lo = np.frombuffer(np.uint32(0xc2aeac50).tobytes(), f32)[0]
    log2e = np.frombuffer(np.uint32(0x3fb8aa3b).tobytes(), f32)[0]
    with np.errstate(invalid="ignore"):
        src = (x * log2e).astype(f32)
        frac = (src - np.floor(src)).astype(f32)

        def vfma(a, b, c):
            return (a.astype(np.longdouble) * np.longdouble(b) + np.longdouble(c)).astype(f32)

        r = vfma(frac, f32(-0.079204240219773236), f32(-0.22433836478672356))
        r = vfma(frac, r, f32(0.30354260500649682))
        r = vfma(frac, r, f32(0.00010703434948458272))
        t = vfma(np.full_like(src, 8388608.0), (src - r).astype(f32), f32(8388608.0 * 127.0))
        out = np.nan_to_num(np.trunc(t.astype(np.float64))).astype(np.int64).astype(np.int32)
    return np.where(x < lo, f32(0), out.view(f32)).astype(f32)


def small(m, n):
    return m <= 11 or n <= 3


def blocks(k):  # the packed kernel's contraction split
    count = -(-k // 192)
    if count <= 1:
        return [k]
    if count == 2:
        return [k // 2, k // 2] + ([1] if k % 2 else [])
    return [min(192, k - s) for s in range(0, k, 192)]


def seq(terms, acc=f32(0)):
    for x in terms:
        acc = f32(acc + x)
    return acc


def packed(terms, acc=None):
    s = 0
    for b in blocks(len(terms)):
        part = seq(terms[s:s + b])
        acc = part if acc is None else f32(acc + part)
        s += b
    return acc


def lanes4(terms):
    k4 = len(terms) // 4 * 4
    lane = [seq(terms[c:k4:4]) for c in range(4)]
    return seq(terms[k4:], f32(f32(lane[0] + lane[2]) + f32(lane[1] + lane[3])))


def two_lanes4(terms):
    k8 = len(terms) // 8 * 8
    a = [seq(terms[c:k8:8]) for c in range(4)]
    b = [seq(terms[c + 4:k8:8]) for c in range(4)]
    v = [f32(a[c] + b[c]) for c in range(4)]
    return seq(terms[k8:], f32(f32(v[0] + v[2]) + f32(v[1] + v[3])))


def peel_order(terms, acc):  # the small p·v kernel's outputs before a 16-byte boundary
    k8 = len(terms) // 8 * 8
    for g in range(0, k8, 8):
        acc = seq(terms[g:g + 4], acc)
        acc = f32(acc + seq(terms[g + 4:g + 8]))
    return seq(terms[k8:], acc)


def groups4(terms, acc):  # bfloat16 one-row p·v (MKL's gemv)
    k4 = len(terms) // 4 * 4
    for g in range(0, k4, 4):
        t = terms[g:g + 4]
        acc = f32(acc + f32(f32(t[0] + t[2]) + f32(t[1] + t[3])))
    return seq(terms[k4:][::-1], acc)


def qk_score(q, key, i, m, n, bf16):
    terms = (q * key).astype(f32)
    if not small(m, n):
        return packed(terms)
    if bf16 and (n == 1 or m == 1):
        return lanes4(terms)
    return lanes4(terms) if i < m - m % 4 else two_lanes4(terms)


def pv_value(p, v_col, m, n, bf16, start, peel):
    terms = (p * v_col).astype(f32)
    if not small(m, n):
        return packed(terms, start)
    acc = f32(0) if start is None else start
    if bf16 and n == 1:
        return groups4(terms, acc)
    return peel_order(terms, acc) if peel else seq(terms, acc)


def exp_sum(x):  # _exp_reduce_sum_fusion_kernel's exponentials and sum (AVX2: 8 floats)
    n = len(x)
    nv, n2 = n - n % 8, n - n % 16
    p = np.zeros(n, f32)
    p[:nv] = fexp_u20(x[:nv])
    for j in range(nv, n):
        p[j] = f32(np.exp(np.float64(x[j])))
    a, b, c = np.zeros(8, f32), np.zeros(8, f32), np.zeros(8, f32)
    for t in range(0, n2, 16):
        a = (a + p[t:t + 8]).astype(f32)
        b = (b + p[t + 8:t + 16]).astype(f32)
    for t in range(n2, nv, 8):
        c = (c + p[t:t + 8]).astype(f32)
    lane = ((c + a).astype(f32) + b).astype(f32)
    for h in (4, 2, 1):
        lane[:h] = (lane[:h] + lane[h:2 * h]).astype(f32)
    return p, seq(p[nv:], lane[0])


def flash(q, k, v, causal, dtype, threads):
    """q [H, T, D], k and v [H, S, D] (float32 values of the dtype), batch 1."""
    bf16 = dtype == torch.bfloat16
    H, T, D = q.shape
    S = k.shape[1]
    q_split = min(256 if T >= 768 else 64 if T >= 192 else 32, T)
    kv_split = min(512, S)
    slices = -(-T // q_split)
    tasks = H * slices
    chunk = -(-tasks // min(threads, tasks))
    per_thread = q_split * kv_split + 2 * q_split + q_split * D
    scale = f32(1 / np.sqrt(D))
    out = np.zeros((H, T, D), f32)
    for h in range(H):
        for r in range(T):
            qb, j = r // q_split, r % q_split
            m0 = qb * q_split
            qn = min(q_split, T - m0)
            thread = (h * slices + qb) // chunk
            peel = (4 - (thread * per_thread + q_split * kv_split + 2 * q_split + j * D) % 4) % 4
            run_max, run_sum, dst = f32(-np.inf), f32(0), None
            for n0 in range(0, S, kv_split):
                kvn = min(kv_split, S - n0)
                s = np.full(kvn, -np.inf, f32)
                for i in range(kvn):
                    if not causal or n0 + i <= r:
                        s[i] = f32(qk_score(q[h, r], k[h, n0 + i], i, kvn, qn, bf16) * scale)
                new_max = max(run_max, s.max())
                p = np.zeros(kvn, f32)
                if new_max != -np.inf:
                    p, block_sum = exp_sum((s - new_max).astype(f32))
                    rescale = expf(f32(run_max - new_max))
                    run_sum = fma(rescale, run_sum, block_sum)
                    run_max = new_max
                    if dst is not None:
                        dst = (dst * rescale).astype(f32)
                    p = torch.tensor(p).to(dtype).float().numpy()
                dst = np.array([pv_value(p, v[h, n0:n0 + kvn, d], D, qn, bf16,
                                         None if dst is None else dst[d], d < peel)
                                for d in range(D)], f32)
            total = f32(1) if run_sum == 0 else run_sum
            out[h, r] = (dst * f32(f32(1) / total)).astype(f32)
    return torch.tensor(out).to(dtype)


def compare(dtype, T, S, D, H, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(1, H, T, D, generator=g) * 1.5).to(dtype)
    k = (torch.randn(1, H, S, D, generator=g) * 1.5).to(dtype)
    v = torch.randn(1, H, S, D, generator=g).to(dtype)
    causal = T > 1
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)[0]
    got = flash(q[0].float().numpy(), k[0].float().numpy(), v[0].float().numpy(), causal, dtype,
                torch.get_num_threads())
    return int((got.view(torch.int16) != want.view(torch.int16)).sum()), want.numel()


def main():
    dtypes = [sys.argv[1]] if len(sys.argv) > 1 else ["float16", "bfloat16"]
    shapes = ([tuple(int(a) for a in sys.argv[i:i + 4]) for i in range(2, len(sys.argv), 4)]
              or [(20, 20, 16, 8), (40, 40, 64, 4), (35, 35, 16, 8), (200, 200, 16, 2),
                  (1, 37, 64, 32), (1, 600, 16, 8), (9, 9, 16, 8)])
    for name in dtypes:
        for T, S, D, H in shapes:
            if T != S and T != 1:
                sys.exit("T must be S (a prompt) or 1 (a decoding step)")
            apart, total = compare(getattr(torch, name), T, S, D, H)
            print(f"{name} T {T} S {S} D {D} H {H}: {apart} of {total} outputs apart", flush=True)


if __name__ == "__main__":
    main()

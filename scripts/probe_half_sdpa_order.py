#!/usr/bin/env python3
"""Which summation order of q·k and p·v gives torch's own float16 CPU flash attention bits?

A Python model of cpu_flash_attention (torch's FlashAttentionKernel.cpp) for one block of keys,
as src/models/hf/reduced_attention.cpp computes it: scores in float32 times the scale, the
row's maximum, exp by Vectorized<float>::fexp_u20 over whole 8-float vectors and std::exp over
the rest, the sum over the lanes' halving tree, the probabilities rounded to float16, their
product with v in float32 and one rounding of (p·v) * (1 / sum). The q·k and p·v sums are taken
in the orders below, and each variant's outputs are compared with
torch.nn.functional.scaled_dot_product_attention(is_causal=True) on random float16 heads. The
order that leaves no output apart is the one lm-eval uses (reduced_attention.cpp,
ordered_matmul; docs/fidelity.md, "The attention's products and OpenBLAS's kernel").

Environment: torch 2.15.0 (CPU; on an AVX-512 machine set ATEN_CPU_CAPABILITY=avx2).
Usage: python scripts/probe_half_sdpa_order.py [T HEAD_DIM HEADS [KEYS]]   (default 20 16 32):
T causal queries over as many keys, or with KEYS one query (T = 1, a decoding step) over KEYS.
Measured (7 Dec 2026): the default shape, sequential q·k and p·v 0 of 10,240 outputs apart, the
other pairings 3-10 apart (12 64 100: 0 of 76,800, the others 10-49). One query over 40 keys
(1 64 200 40): no pairing is exact; q·k by four interleaved partial sums with p·v sequential is
the closest, 7 of 12,800 apart (sequential q·k 19): torch's kernel sums a one-row block's scores
in an order not found yet, nearer to its sum() helper's. Below 8 keys the model's np.exp for the
tail is not glibc's expf, so rows that short can show differences of the model's own.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

f32 = np.float32


def from_bits(u):
    return np.frombuffer(np.uint32(u).tobytes(), f32)[0]


def fma(a, b, c):
    # float32 fused multiply-add through float64 (exact product; a double rounding is possible
    # but rare and would show as a difference, not hide one).
    return f32(np.float64(a) * np.float64(b) + np.float64(c))


def fexp_u20(x):
    x = f32(x)
    if np.isnan(x):
        return f32(-0.0)
    if x < from_bits(0xc2aeac50):
        return f32(0)
    src = f32(x * from_bits(0x3fb8aa3b))
    frac = f32(src - np.floor(src))
    r = fma(frac, f32(-0.079204240219773236), f32(-0.22433836478672356))
    r = fma(frac, r, f32(0.30354260500649682))
    r = fma(frac, r, f32(0.00010703434948458272))
    t = fma(f32(8388608.0), f32(src - r), f32(8388608.0 * 127.0))
    return np.frombuffer(np.int32(int(t)).tobytes(), f32)[0]


def dot_sequential(a, b):
    acc = f32(0)
    for x, y in zip(a, b):
        acc = f32(acc + f32(x) * f32(y))
    return acc


def dot_ilp4(a, b):  # BlasKernel.cpp's sum(): four interleaved partial sums
    p = [f32(0)] * 4
    n, i = len(a), 0
    while i + 4 <= n:
        for k in range(4):
            p[k] = f32(p[k] + f32(a[i + k]) * f32(b[i + k]))
        i += 4
    for j in range(i, n):
        p[0] = f32(p[0] + f32(a[j]) * f32(b[j]))
    for k in range(1, 4):
        p[0] = f32(p[0] + p[k])
    return p[0]


def dot_lanes8(a, b):  # one 8-float vector accumulator, lanes by halving, then the tail
    n, acc = len(a), np.zeros(8, f32)
    whole = n - n % 8
    for i in range(0, whole, 8):
        for lane in range(8):
            acc[lane] = fma(a[i + lane], b[i + lane], acc[lane])
    h = 4
    while h >= 1:
        acc[:h] = (acc[:h] + acc[h:2 * h]).astype(f32)
        h //= 2
    s = acc[0]
    for j in range(whole, n):
        s = fma(a[j], b[j], s)
    return s


DOTS = {"sequential": dot_sequential, "ilp4": dot_ilp4, "lanes8": dot_lanes8}


def attention(q, k, v, scale, qk_dot, pv_dot):
    T, D = q.shape
    S, w = k.shape[0], 8
    out = np.zeros((T, D), f32)
    for i in range(T):
        s = np.full(S, -np.inf, f32)
        for j in range(S - T + i + 1):
            s[j] = f32(qk_dot(q[i], k[j]) * f32(scale))
        m, whole = s.max(), S - S % w
        p, lanes = np.zeros(S, f32), np.zeros(w, f32)
        for j in range(whole):
            p[j] = fexp_u20(f32(s[j] - m))
            lanes[j % w] = f32(lanes[j % w] + p[j])
        h = w // 2
        while h >= 1:
            lanes[:h] = (lanes[:h] + lanes[h:2 * h]).astype(f32)
            h //= 2
        total = lanes[0]
        for j in range(whole, S):
            p[j] = f32(np.exp(f32(s[j] - m))) if s[j] != -np.inf else f32(0)
            total = f32(total + p[j])
        p16 = p.astype(np.float16).astype(f32)
        pv = np.array([pv_dot(p16, v[:, d]) for d in range(D)], f32)
        out[i] = (pv * f32(f32(1) / total)).astype(f32)
    return out.astype(np.float16)


def main():
    T, D, H = (int(a) for a in sys.argv[1:4]) if len(sys.argv) >= 4 else (20, 16, 32)
    S = int(sys.argv[4]) if len(sys.argv) >= 5 else T
    if S != T and T != 1:
        sys.exit("KEYS other than T needs T = 1 (a decoding step)")
    torch.manual_seed(0)
    q = (torch.randn(1, H, T, D) * 1.5).half()
    k = (torch.randn(1, H, S, D) * 1.5).half()
    v = torch.randn(1, H, S, D).half()
    want = F.scaled_dot_product_attention(q, k, v, is_causal=S == T and T > 1).numpy()
    for qk_name, qk_dot in DOTS.items():
        for pv_name in ("sequential", "ilp4", "lanes8"):
            apart = 0
            for h in range(H):
                got = attention(q[0, h].float().numpy(), k[0, h].float().numpy(),
                                v[0, h].float().numpy(), 1 / np.sqrt(D), qk_dot, DOTS[pv_name])
                apart += int((got.view(np.uint16) != want[0, h].view(np.uint16)).sum())
            print(f"q·k {qk_name:10s} p·v {pv_name:10s}: {apart} of {H * T * D} outputs apart",
                  flush=True)


if __name__ == "__main__":
    main()

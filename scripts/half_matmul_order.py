#!/usr/bin/env python3
"""Where float16/bfloat16 matrix products on the CPU part from "float32 product, rounded once".

torch alone, no lm-eval: for the zoo's projection shapes, random operands in the dtype, it counts
the outputs of torch.matmul / F.linear in the dtype that differ from
  f32:  (a.float() @ b.float()).to(dtype)   (torch's own float32 GEMM, rounded once)
  f64:  (a.double() @ b.double()).to(dtype) (the exact sum, rounded once)
  blas: numpy's float32 product (another BLAS, as the OpenBLAS sgemm lm-eval's libtorch calls),
        rounded once
  lanes32: each output's dot product summed in 32 float32 partial sums (lane l takes the
        products l, l + 32, ...), the partial sums then added pairwise (16 + 16, 8 + 8, ..., as
        four 8-float registers and their lanes reduce), rounded once
  fp16dot: torch's own float16 dot product on an AVX2 CPU (fp16_dot_with_fp32_arith in
        aten/src/ATen/native/cpu/ReducedPrecisionFloatGemvFastPathKernel.cpp): eight 8-float
        registers over blocks of 64 (register r, lane l takes the products 8r + l, 8r + l + 64,
        ...), the registers added pairwise (r + r+4, then r + r+2, r + r+1) and the last one's
        lanes by vec_reduce_all's tree ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)); then the rest in
        blocks of 16 into one 8-float register (low 8, then high 8), its lanes by the same tree,
        added; then the last k mod 16 products one by one; the bias added to that float, rounded
        once. A float16 product is exact in float32, so FMA and mul+add give the same bits here
A count of 0 against f32 says the dtype's product is torch's float32 GEMM rounded once; counts
against f64 and blas then are what the float32 accumulation order alone moves (a float32 ulp
that carries the rounding to the dtype's other neighbour). Measured on an AVX2 CPU (torch 2.15):
both float16 and bfloat16 equal fp16dot on every shape here (M = 1 and M > 1, k with and without
tails of 16 and of 1, with and without bias); bfloat16 is a few outputs per 10^4 apart from f32
(so not MKL's sgemm rounded once, as first thought), float16 from lanes32 and f32; neither dtype
equals blas, the order lm-eval's float32 products run in.

Environment: torch 2.15.0 (CPU), numpy. Usage: python scripts/half_matmul_order.py
"""
import numpy as np
import torch
import torch.nn.functional as F

SHAPES = [(27, 64, 64), (27, 64, 128), (27, 64, 256), (27, 128, 64), (27, 64, 512), (200, 256, 256),
          (27, 512, 64), (1, 256, 512), (1, 88, 30), (4, 88, 30), (3, 100, 40), (1, 1000, 20),
          (7, 11, 9)]


def lanes32(a, w):
    """a [t, k] @ w[n, k].T in float32 with 32 partial sums per output, reduced pairwise."""
    t, k = a.shape
    acc = np.zeros((t, w.shape[0], 32), np.float32)
    for c in range(0, k - k % 32, 32):
        acc = (acc + (a[:, None, c:c + 32] * w[None, :, c:c + 32]).astype(np.float32)).astype(np.float32)
    h = 16
    while h >= 1:
        acc = (acc[..., :h] + acc[..., h:2 * h]).astype(np.float32)
        h //= 2
    out = acc[..., 0]
    for c in range(k - k % 32, k):  # a scalar tail (none for the shapes here)
        out = (out + a[:, None, c] * w[None, :, c]).astype(np.float32)
    return out


def tree8(v):
    """vec_reduce_all over an 8-float register's lanes (last axis): halves added, 4, 2, 1."""
    for h in (4, 2, 1):
        v = (v[..., :h] + v[..., h:2 * h]).astype(np.float32)
    return v[..., 0]


def fp16dot(a, w):
    """a [t, k] @ w[n, k].T as torch's fp16_dot_with_fp32_arith sums each output (AVX2)."""
    t, k = a.shape
    n = w.shape[0]
    k64, k16 = k - k % 64, k - k % 16
    acc = np.zeros((t, n, 64), np.float32)
    for c in range(0, k64, 64):
        acc = (acc + a[:, None, c:c + 64] * w[None, :, c:c + 64]).astype(np.float32)
    regs = acc.reshape(t, n, 8, 8)
    for h in (4, 2, 1):
        regs = (regs[:, :, :h] + regs[:, :, h:2 * h]).astype(np.float32)
    out = tree8(regs[:, :, 0])
    tail = np.zeros((t, n, 8), np.float32)
    for c in range(k64, k16, 16):
        tail = (tail + a[:, None, c:c + 8] * w[None, :, c:c + 8]).astype(np.float32)
        tail = (tail + a[:, None, c + 8:c + 16] * w[None, :, c + 8:c + 16]).astype(np.float32)
    out = (out + tree8(tail)).astype(np.float32)
    for c in range(k16, k):
        out = (out + a[:, None, c] * w[None, :, c]).astype(np.float32)
    return out


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    for dt in (torch.bfloat16, torch.float16):
        for t, k, n in SHAPES:
            a = torch.randn(t, k).to(dt)
            w = (torch.randn(n, k) * k ** -0.5).to(dt)
            mm = torch.matmul(a, w.T)
            lin = F.linear(a, w)
            f32 = (a.float() @ w.float().T).to(dt)
            f64 = (a.double() @ w.double().T).to(dt)
            blas = torch.from_numpy(a.float().numpy() @ w.float().numpy().T).to(dt)
            l32 = torch.from_numpy(lanes32(a.float().numpy(), w.float().numpy())).to(dt)
            b = torch.randn(n).to(dt)
            d16 = fp16dot(a.float().numpy(), w.float().numpy())
            dot = torch.from_numpy(d16).to(dt)
            dotb = torch.from_numpy((d16 + b.float().numpy()).astype(np.float32)).to(dt)
            linb = F.linear(a, w, b)
            print(f"{str(dt):15s} [{t}x{k}]@[{k}x{n}]: matmul vs f32 {int((mm != f32).sum()):4d}, "
                  f"linear vs f32 {int((lin != f32).sum()):4d}, vs f64 {int((mm != f64).sum()):4d}, "
                  f"vs blas {int((mm != blas).sum()):4d}, vs lanes32 {int((mm != l32).sum()):4d}, "
                  f"vs fp16dot {int((lin != dot).sum()):4d} (bias {int((linb != dotb).sum()):4d}), "
                  f"f32 vs blas {int((f32 != blas).sum()):4d} "
                  f"of {mm.numel()}")


if __name__ == "__main__":
    main()

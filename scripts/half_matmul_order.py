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
A count of 0 against f32 says the dtype's product is torch's float32 GEMM rounded once; counts
against f64 and blas then are what the float32 accumulation order alone moves (a float32 ulp
that carries the rounding to the dtype's other neighbour). Measured on an AVX2 CPU (torch 2.15):
bfloat16 equals f32 for the zoo's shapes, float16 does not and comes closest to lanes32 (equal
or a few outputs apart); neither equals blas, the order lm-eval's float32 products run in.

Environment: torch 2.15.0 (CPU), numpy. Usage: python scripts/half_matmul_order.py
"""
import numpy as np
import torch
import torch.nn.functional as F

SHAPES = [(27, 64, 64), (27, 64, 128), (27, 64, 256), (27, 128, 64), (27, 64, 512), (200, 256, 256),
          (27, 512, 64)]


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
            print(f"{str(dt):15s} [{t}x{k}]@[{k}x{n}]: matmul vs f32 {int((mm != f32).sum()):4d}, "
                  f"linear vs f32 {int((lin != f32).sum()):4d}, vs f64 {int((mm != f64).sum()):4d}, "
                  f"vs blas {int((mm != blas).sum()):4d}, vs lanes32 {int((mm != l32).sum()):4d}, "
                  f"f32 vs blas {int((f32 != blas).sum()):4d} "
                  f"of {mm.numel()}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where float16/bfloat16 matrix products on the CPU part from "float32 product, rounded once".

torch alone, no lm-eval: for the zoo's projection shapes, random operands in the dtype, it counts
the outputs of torch.matmul / F.linear in the dtype that differ from
  f32:  (a.float() @ b.float()).to(dtype)   (torch's own float32 GEMM, rounded once)
  f64:  (a.double() @ b.double()).to(dtype) (the exact sum, rounded once)
  blas: numpy's float32 product (another BLAS, as the OpenBLAS sgemm lm-eval's libtorch calls),
        rounded once
A count of 0 against f32 says the dtype's product is torch's float32 GEMM rounded once; counts
against f64 and blas then are what the float32 accumulation order alone moves (a float32 ulp
that carries the rounding to the dtype's other neighbour).

Environment: torch 2.15.0 (CPU), numpy. Usage: python scripts/half_matmul_order.py
"""
import numpy as np
import torch
import torch.nn.functional as F

SHAPES = [(27, 64, 64), (27, 64, 128), (27, 64, 256), (27, 128, 64), (27, 64, 512), (200, 256, 256)]


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
            print(f"{str(dt):15s} [{t}x{k}]@[{k}x{n}]: matmul vs f32 {int((mm != f32).sum()):4d}, "
                  f"linear vs f32 {int((lin != f32).sum()):4d}, vs f64 {int((mm != f64).sum()):4d}, "
                  f"vs blas {int((mm != blas).sum()):4d}, f32 vs blas {int((f32 != blas).sum()):4d} "
                  f"of {mm.numel()}")


if __name__ == "__main__":
    main()

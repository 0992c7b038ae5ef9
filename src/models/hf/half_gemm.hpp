// Matrix products of float16/bfloat16 tensors on the CPU in the summation order of torch 2.x's
// own reduced-precision kernels, which transformers runs (scripts/half_matmul_order.py).
//
// Why: torch 2.15 does not hand these products to its BLAS. Each output of F.linear (and of a
// matmul whose second operand is a transposed row-major matrix, q·kᵀ) is one float32 dot
// product in the order of fp16_dot_with_fp32_arith (ReducedPrecisionFloatGemvFastPathKernel.cpp,
// AVX2): k in blocks of 64 as eight 8-float registers (product p of a block into register p/8,
// lane p%8), the registers added r + r+4, r + r+2, r + r+1 and the last one's lanes as
// ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)); the remaining whole blocks of 16 into one 8-float
// register (low 8, then high 8), reduced by the same tree and added; the last k mod 16 products
// added one by one; then the bias; one rounding to the dtype. A matmul whose second operand is
// row-major (p·v) sums each output as cpublas's `sum` does: four partial sums (index l into
// l % 4, the k mod 4 rest into the first), then ((s0+s1)+s2)+s3; a batched product of small
// matrices (contraction x rows x columns under 400) sums left to right, as bmm's own loop.
// OpenBLAS's float32 sgemm, which the float32 path uses, sums in another order, and a float32 ulp
// now and then moved a rounding to float16/bfloat16 the other way. A product of two float16 (or two
// bfloat16) values is exact in float32, so a multiply then add gives the bits of a fused
// multiply-add. Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace lmeval::hf::half_gemm {

// The dot product of a[0..k) and b[0..k) in fp16_dot_with_fp32_arith's order.
float dot(const float* a, const float* b, int64_t k);

// cpublas's four-way sum of a[l] * b[l * ldb] for l < k.
float strided_sum4(const float* a, const float* b, int64_t ldb, int64_t k);

// F.linear(x, w, b) for x in float16/bfloat16 on the CPU: [..., k] x [n, k] (+ [n]) -> [..., n]
// in x's dtype.
at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

// at::matmul(a, b) for a in float16/bfloat16 on the CPU: [..., m, k] x [..., k, n] with
// broadcast batch dimensions, in a's dtype. Small batched products sum left to right; otherwise
// b with unit stride along k (a transposed row-major matrix) takes `dot`, any other b
// `strided_sum4`, as torch's kernels choose by layout.
at::Tensor matmul(const at::Tensor& a, const at::Tensor& b);

}  // namespace lmeval::hf::half_gemm

// float16 and bfloat16 on the CPU as torch 2.x computes them for transformers. Its CPU kernels
// for these dtypes load each operand as float32, compute in float32 ("opmath") and round the
// result once to the tensor's dtype: a matrix product accumulates in float32 and rounds each
// output once, a scalar factor stays float32. The libtorch this project links (Debian's 1.13)
// has no float16 kernels for most of these operations, and converts a scalar factor to the
// tensor's dtype first; so on the CPU these operations run here in float32 and round once.
// Elementwise tensor-tensor additions and multiplications already compute that way in 1.13 and
// are left to it. Everything else (float32, float64, CUDA) passes straight through, unchanged.
// Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <utility>

#include "models/hf/half_gemm.hpp"

namespace lmeval::hf {

// A float16/bfloat16 tensor on the CPU: its operations go through float32 here.
inline bool reduced_on_cpu(const at::Tensor& x) {
  return x.device().is_cpu() && (x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16);
}

inline at::Tensor float32(const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; }
// A weight (possibly undefined) in the dtype of the tensor it meets.
inline at::Tensor like(const at::Tensor& w, const at::Tensor& x) {
  return w.defined() ? w.to(x.scalar_type()) : w;
}

// f(x) computed in float32 and rounded once to x's dtype (f(x) itself when x is not reduced).
template <typename F>
at::Tensor via_float(const at::Tensor& x, F&& f) {
  if (!reduced_on_cpu(x)) return std::forward<F>(f)(x);
  return std::forward<F>(f)(x.to(at::kFloat)).to(x.scalar_type());
}

// torch.nn.functional.linear: float32 accumulation in torch's order (half_gemm.hpp), one
// rounding of each output (bias included).
inline at::Tensor linear_rounded(const at::Tensor& x, const at::Tensor& w,
                                 const at::Tensor& b = {}) {
  if (!reduced_on_cpu(x)) return at::linear(x, w, b);
  return half_gemm::linear(x, w, b);
}

inline at::Tensor matmul_rounded(const at::Tensor& a, const at::Tensor& b) {
  if (!reduced_on_cpu(a)) return at::matmul(a, b);
  return half_gemm::matmul(a, b);
}

// log_softmax over the last dimension as torch 2.x's CPU kernel (_vec_log_softmax_lastdim) rounds
// it for a float16/bfloat16 input: x - max and the exponentials' sum in float32, but the sum and
// its log kept in buffers of the input's dtype, so both are rounded before the subtraction.
// HFLM's loglikelihood is this log_softmax of the logits in their dtype.
inline at::Tensor log_softmax_rounded(const at::Tensor& x) {
  if (!reduced_on_cpu(x)) return at::log_softmax(x, -1);
  const auto dt = x.scalar_type();
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor d = xf - std::get<0>(xf.max(-1, true));
  const at::Tensor sum = at::exp(d).sum(-1, true).to(dt).to(at::kFloat);
  return (d - at::log(sum).to(dt).to(at::kFloat)).to(dt);
}

// x * f with f kept in float32 (a Python float times a half tensor).
inline at::Tensor scaled(const at::Tensor& x, double f) {
  return via_float(x, [f](const at::Tensor& t) { return t * f; });
}

}  // namespace lmeval::hf

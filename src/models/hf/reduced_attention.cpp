// scaled_dot_product_attention in float16/bfloat16 on the CPU, as torch 2.x's CPU flash attention
// (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp, cpu_flash_attention) rounds it: which
// transformers runs for every family that supports SDPA (HFLM passes no attn_implementation).
// The kernel keeps the scores, their running maximum and sum, and the output in float32; the
// only rounding to the model dtype inside is of the exponentiated scores before they multiply v
// (its qk_reduced buffer), per block of 512 keys against the running maximum so far; the output
// is the float32 sum times the reciprocal of the row's sum, rounded once.
#include <algorithm>
#include <limits>

#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

constexpr int64_t kKeyBlock = 512;  // cpu_flash_attention's kv_split_size

}  // namespace

Tensor Transformer::Impl::sdpa_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& mask, bool causal_only, const Tensor& bias) const {
  const auto dt = q.scalar_type();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Tensor s = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-1, -2)) * cfg.attn_scale;
  // A float mask (ALiBi as Falcon passes it) is in the model dtype and added after the scale.
  if (bias.defined()) s = s + bias.to(dt).to(at::kFloat);
  Tensor allow = mask;
  if (causal_only || !allow.defined()) {
    const int64_t T = q.size(2), S = k.size(2);
    Tensor qi = at::arange(S - T, S, lopt()).unsqueeze(1), ki = at::arange(0, S, lopt());
    allow = ki.unsqueeze(0).le(qi);
  }
  s = s.masked_fill(allow.logical_not(), neg_inf);
  const Tensor vf = v.to(at::kFloat);
  const int64_t S = s.size(-1);
  Tensor run_max, sum, out;
  for (int64_t n0 = 0; n0 < S; n0 += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, S - n0);
    Tensor block = s.narrow(-1, n0, n);
    Tensor m = std::get<0>(block.max(-1, true));
    if (run_max.defined()) m = at::maximum(m, run_max);
    // A row with no key allowed so far keeps exp(-inf) = 0 (the kernel fills zeros there).
    Tensor m_safe = m.masked_fill(m.eq(neg_inf), 0.0);
    Tensor p = at::exp(block - m_safe);
    Tensor pv = at::matmul(p.to(dt).to(at::kFloat), vf.narrow(-2, n0, n));
    if (!run_max.defined()) {
      sum = p.sum(-1, true);
      out = pv;
    } else {
      Tensor e = at::exp(run_max - m_safe);
      sum = p.sum(-1, true) + e * sum;
      out = out * e + pv;
    }
    run_max = m;
  }
  sum = sum.masked_fill(sum.eq(0.0), 1.0);
  return (out * sum.reciprocal()).to(dt);
}

}  // namespace lmeval::hf

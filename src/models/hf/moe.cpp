// The mixture-of-experts MLP of the device path (Transformer::Impl::moe): experts over the tokens
// routed to them, one pair of matrix products per expert that has tokens.
#include <tuple>
#include <vector>

#include "models/hf/half_gemm.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// GptOssExperts._apply_gate on [gate; up] halves of width I: the gate clamped above at the
// limit, up to [-limit, limit], then (up + 1) * gate * sigmoid(alpha * gate).
Tensor clamped_swiglu(const Tensor& gu, int64_t I, double limit, double alpha) {
  Tensor gate =
      via_float(gu.narrow(-1, 0, I), [limit](const Tensor& t) { return t.clamp_max(limit); });
  Tensor up =
      via_float(gu.narrow(-1, I, I), [limit](const Tensor& t) { return t.clamp(-limit, limit); });
  Tensor glu =
      gate * via_float(scaled(gate, alpha), [](const Tensor& t) { return at::sigmoid(t); });
  return (up + 1) * glu;
}

Tensor row_or_none(const Tensor& t, int64_t e) { return t.defined() ? t[e] : Tensor(); }

// One expert projection as grouped_mm_experts_forward's _grouped_linear computes it: the product
// (rounded to the dtype), then the bias added to it. In float16/bfloat16 on the CPU, a weight
// stored [in, out] (GPT-OSS) is multiplied in that layout, whose sums run in another order.
Tensor expert_linear(const Tensor& x, const Tensor& w, const Tensor& b, bool transposed) {
  if (!reduced_on_cpu(x)) return at::linear(x, w, b);
  Tensor y = transposed ? half_gemm::matmul(x, w.t().contiguous()) : half_gemm::linear(x, w, {});
  return b.defined() ? y + b.to(y.scalar_type()) : y;
}

}  // namespace

Tensor Transformer::Impl::moe(const Tensor& x, const Layer& L,
                              const std::vector<int64_t>* call_rows) const {
  const MoeConfig& mc = cfg.moe;
  const int64_t Hd = cfg.hidden_size, I = mc.expert_intermediate, K = mc.top_k;
  Tensor h = x.reshape({-1, Hd});
  const int64_t N = h.size(0);
  auto [weights, chosen] = route(h, L, call_rows);  // moe_router.cpp
  const bool scaled_input = mc.router == MoeRouter::kLlama4;
  Tensor out = at::zeros_like(h);
  // Which (token, slot) pairs each expert serves, read once on the host.
  Tensor chosen_cpu = chosen.to(at::kCPU).contiguous();
  const int64_t* c = chosen_cpu.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(mc.num_experts));
  std::vector<std::vector<int64_t>> slots(static_cast<size_t>(mc.num_experts));
  for (int64_t t = 0; t < N; ++t)
    for (int64_t k = 0; k < K; ++k) {
      rows[c[t * K + k]].push_back(t);
      slots[c[t * K + k]].push_back(t * K + k);
    }
  Tensor flat_w = weights.reshape({-1});
  // transformers 5.x runs the experts through grouped_mm_experts_forward (its default experts
  // implementation): each (token, slot) output times its weight in the product's dtype, then a
  // token's slots summed in float32 in slot order and rounded once; the eager loop's index_add_
  // rounded to the model dtype after each expert instead. Llama 4's experts have no such
  // interface: they keep the eager form.
  Tensor weighted;  // [N * K, Hd], row t * K + k
  for (int64_t e = 0; e < mc.num_experts; ++e) {
    if (rows[e].empty()) continue;
    Tensor idx = at::tensor(rows[e], at::kLong).to(h.device());
    Tensor slot = at::tensor(slots[e], at::kLong).to(h.device());
    Tensor w = flat_w.index_select(0, slot).unsqueeze(-1);
    Tensor in = h.index_select(0, idx);
    if (scaled_input) in = in * w;  // Llama 4: the score scales the expert's input instead
    const bool tr = mc.transposed_experts;
    Tensor gu = expert_linear(in, L.experts_up[e], row_or_none(L.experts_up_b, e), tr);
    Tensor a = mc.swiglu_limit > 0.0 ? clamped_swiglu(gu, I, mc.swiglu_limit, mc.swiglu_alpha)
                                     : act(gu.narrow(-1, 0, I)) * gu.narrow(-1, I, I);
    Tensor y = expert_linear(a, L.experts_down[e], row_or_none(L.experts_down_b, e), tr);
    if (scaled_input) {
      out.index_add_(0, idx, y);
      continue;
    }
    // float32 weights (Mixtral, DeepSeek) give float32 products.
    Tensor wy = y * w;
    if (!weighted.defined()) weighted = at::zeros({N * K, Hd}, wy.options());
    weighted.index_copy_(0, slot, wy);
  }
  if (weighted.defined()) {
    Tensor per = weighted.view({N, K, Hd});
    Tensor sum = per.select(1, 0).to(at::kFloat);
    for (int64_t k = 1; k < K; ++k) sum = sum + per.select(1, k).to(at::kFloat);
    out = sum.to(weighted.scalar_type()).to(out.scalar_type());
  }
  if (mc.shared_intermediate > 0) {
    const int64_t S = mc.shared_intermediate;
    Tensor gu = linear_rounded(h, L.up_w);
    Tensor shared = linear_rounded(act(gu.narrow(-1, 0, S)) * gu.narrow(-1, S, S), L.down_w);
    if (L.shared_gate_w.defined())
      shared = via_float(linear_rounded(h, L.shared_gate_w),
                         [](const Tensor& t) { return at::sigmoid(t); }) *
               shared;
    out = out + shared;
  }
  return out.view(x.sizes());
}

}  // namespace lmeval::hf

// The routers of the mixture-of-experts MLP (MoeConfig::router): which top_k experts each token
// goes to and with what weight, on the device path (Impl::route, ATen) and on the CPU scoring
// path (Impl::route_row, one row of router logits).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "models/hf/kernels.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// A mask [N, E] of the experts in each token's topk_group best groups, by group score [N, G].
Tensor group_mask(const Tensor& group_scores, const MoeConfig& mc) {
  const int64_t G = mc.n_group, E = mc.num_experts;
  Tensor idx = std::get<1>(at::topk(group_scores, mc.topk_group, -1, true, false));
  Tensor mask = at::zeros_like(group_scores).scatter_(1, idx, 1.0);
  return mask.unsqueeze(-1).expand({-1, G, E / G}).reshape({-1, E}).to(at::kBool);
}

// Indices of the k largest of s[0..n) (the lower index first on ties, as torch.topk keeps them)
// into order[0..k).
void top_k(const float* s, int64_t n, int64_t k, std::vector<int64_t>& order) {
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
}

// Keeps s[e] of the experts in the topk_group best groups by group score, `fill` elsewhere.
void keep_best_groups(float* s, const std::vector<float>& group_score, const MoeConfig& mc,
                      float fill) {
  const int64_t per = mc.num_experts / mc.n_group;
  std::vector<int64_t> order;
  top_k(group_score.data(), mc.n_group, mc.topk_group, order);
  std::vector<bool> keep(static_cast<size_t>(mc.n_group), false);
  for (int64_t g = 0; g < mc.topk_group; ++g) keep[order[g]] = true;
  for (int64_t e = 0; e < mc.num_experts; ++e)
    if (!keep[e / per]) s[e] = fill;
}

// F.linear(h.float(), w.float()) on the CPU as torch's MKL sgemm sums it (math_matmul), each
// batch row's tokens in the kernel of its reference call (call_rows: per row of [B * T] tokens;
// null: one call): a decoding step's one token in sgemv's order, a prefill's in the gemm's.
Tensor router_logits_f32(const Tensor& h, const Tensor& w, const std::vector<int64_t>* call_rows) {
  const Tensor hf = h.to(at::kFloat), wt = w.to(at::kFloat).t();
  if (!call_rows || call_rows->size() <= 1)
    return math_matmul(hf, wt, true, call_rows && !call_rows->empty() ? call_rows->front() : 0, 0,
                       0, false);
  const int64_t B = static_cast<int64_t>(call_rows->size()), T = hf.size(0) / B;
  std::vector<Tensor> rows;
  for (int64_t b = 0; b < B; ++b)
    rows.push_back(math_matmul(hf.narrow(0, b * T, T), wt, true, (*call_rows)[b], 0, 0, false));
  return at::cat(rows);
}

}  // namespace

std::pair<Tensor, Tensor> Transformer::Impl::route(const Tensor& h, const Layer& L,
                                                   const std::vector<int64_t>* call_rows) const {
  const MoeConfig& mc = cfg.moe;
  const int64_t K = mc.top_k, E = mc.num_experts, G = mc.n_group;
  if (mc.router == MoeRouter::kSoftmax) {
    // transformers' sparse MoE blocks: softmax in float32 over logits in the model dtype, the
    // weights back in the model dtype before they scale the expert outputs (but Mixtral's).
    Tensor probs = at::softmax(linear_rounded(h, L.router_w, L.router_b), -1, at::kFloat);
    auto [weights, chosen] = at::topk(probs, K, -1);
    if (mc.norm_topk_prob) weights = weights / weights.sum(-1, true);
    return {mc.float32_weights ? weights : weights.to(h.scalar_type()), chosen};
  }
  if (mc.router == MoeRouter::kTopkSoftmax) {
    // GptOssTopKRouter: the top k logits (router with a bias), softmax over them in their dtype.
    auto [top, chosen] = at::topk(float32(linear_rounded(h, L.router_w, L.router_b)), K, -1);
    return {via_float(top.to(h.scalar_type()), [](const Tensor& t) { return at::softmax(t, -1); }),
            chosen};
  }
  if (mc.router == MoeRouter::kLlama4) {
    // Llama4Router: the top k logits (model dtype), their sigmoid in float32 back in the model
    // dtype (the other experts' -inf gives 0: they add nothing).
    auto [top, chosen] = at::topk(float32(linear_rounded(h, L.router_w)), K, -1);
    return {at::sigmoid(top).to(h.scalar_type()), chosen};
  }
  // DeepseekV2TopkRouter / DeepseekV3TopkRouter: float32 logits; the weights stay float32.
  Tensor logits = h.is_cpu() ? router_logits_f32(h, L.router_w, call_rows)
                             : at::linear(h.to(at::kFloat), L.router_w.to(at::kFloat));
  if (mc.router == MoeRouter::kDeepseekV2) {
    Tensor scores = at::softmax(logits, -1, at::kFloat);
    if (mc.group_limited)  // group_limited_greedy: groups by their best expert
      scores = scores.masked_fill(
          group_mask(std::get<0>(scores.view({-1, G, E / G}).max(-1)), mc).logical_not(), 0.0);
    auto [weights, chosen] = at::topk(scores, K, -1, true, false);
    return {weights * mc.routed_scaling_factor, chosen};
  }
  // DeepSeek-V3: sigmoid scores; the bias moves the choice (groups by their two best experts),
  // not the weights.
  Tensor scores = logits.sigmoid();
  Tensor choice = scores + L.router_bias.to(at::kFloat);
  Tensor group_scores = std::get<0>(at::topk(choice.view({-1, G, E / G}), 2, -1)).sum(-1);
  choice = choice.masked_fill(group_mask(group_scores, mc).logical_not(),
                              -std::numeric_limits<float>::infinity());
  Tensor chosen = std::get<1>(at::topk(choice, K, -1, true, false));
  Tensor weights = scores.gather(1, chosen);
  if (mc.norm_topk_prob) weights = weights / (weights.sum(-1, true) + 1e-20);
  return {weights * mc.routed_scaling_factor, chosen};
}

void Transformer::Impl::route_row(const MoeConfig& mc, float* p, const float* bias, int64_t* chosen,
                                  float* weight) {
  const int64_t E = mc.num_experts, K = mc.top_k, G = mc.n_group, per = E / G;
  std::vector<int64_t> order;
  auto softmax = [&] {
    kernels::exp_shifted(p, E, kernels::max(p, E));
    const float total = kernels::sum(p, E);
    for (int64_t e = 0; e < E; ++e) p[e] /= total;
  };
  if (mc.router == MoeRouter::kSoftmax) {
    softmax();
    top_k(p, E, K, order);
    float sum = 0.0f;
    for (int64_t k = 0; k < K; ++k) sum += p[order[k]];
    for (int64_t k = 0; k < K; ++k) {
      chosen[k] = order[k];
      weight[k] = mc.norm_topk_prob ? p[order[k]] / sum : p[order[k]];
    }
    return;
  }
  if (mc.router == MoeRouter::kTopkSoftmax) {  // softmax over the top k logits only
    top_k(p, E, K, order);
    std::vector<float> top(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) top[k] = p[order[k]];
    kernels::exp_shifted(top.data(), K, top[0]);
    const float total = kernels::sum(top.data(), K);
    for (int64_t k = 0; k < K; ++k) {
      chosen[k] = order[k];
      weight[k] = top[k] / total;
    }
    return;
  }
  if (mc.router == MoeRouter::kLlama4) {
    top_k(p, E, K, order);
    for (int64_t k = 0; k < K; ++k) {
      chosen[k] = order[k];
      weight[k] = 1.0f / (1.0f + std::exp(-p[order[k]]));
    }
    return;
  }
  const float scale = static_cast<float>(mc.routed_scaling_factor);
  std::vector<float> group_score(static_cast<size_t>(G));
  if (mc.router == MoeRouter::kDeepseekV2) {
    softmax();
    if (mc.group_limited) {
      for (int64_t g = 0; g < G; ++g)
        group_score[g] = *std::max_element(p + g * per, p + (g + 1) * per);
      keep_best_groups(p, group_score, mc, 0.0f);
    }
    top_k(p, E, K, order);
    for (int64_t k = 0; k < K; ++k) {
      chosen[k] = order[k];
      weight[k] = p[order[k]] * scale;
    }
    return;
  }
  std::vector<float> choice(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    p[e] = 1.0f / (1.0f + std::exp(-p[e]));
    choice[e] = p[e] + bias[e];
  }
  for (int64_t g = 0; g < G; ++g) {
    top_k(choice.data() + g * per, per, 2, order);
    group_score[g] = choice[g * per + order[0]] + choice[g * per + order[1]];
  }
  keep_best_groups(choice.data(), group_score, mc, -std::numeric_limits<float>::infinity());
  top_k(choice.data(), E, K, order);
  float sum = 0.0f;
  for (int64_t k = 0; k < K; ++k) sum += p[order[k]];
  for (int64_t k = 0; k < K; ++k) {
    chosen[k] = order[k];
    weight[k] = (mc.norm_topk_prob ? p[order[k]] / (sum + 1e-20f) : p[order[k]]) * scale;
  }
}

}  // namespace lmeval::hf

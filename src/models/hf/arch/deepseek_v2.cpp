// DeepSeek-V2 (DeepseekV2ForCausalLM): Llama's block with multi-head latent attention (queries
// through an optional low-rank bottleneck, keys and values from one compressed latent per token,
// rotary embedding on a separate rope part of each head, in pairs (2i, 2i+1)) and, from layer
// first_k_dense_replace on, a mixture of experts with shared experts and a softmax router (greedy
// or group-limited top k, times routed_scaling_factor, never renormalised).
#include <algorithm>
#include <cmath>

#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/deepseek.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

namespace {

// A number of the rotary parameters (rope_parameters, else 4.x's rope_scaling), or `def`.
double rope_param(const ConfigReader& c, const char* key, double def) {
  for (const char* block : {"rope_parameters", "rope_scaling"}) {
    const Json& j = c.json();
    if (c.has(block) && j[block].is_object() && j[block].contains(key) && j[block][key].is_number())
      return j[block][key].get<double>();
  }
  return def;
}

}  // namespace

void parse_deepseek(const ConfigReader& c, ArchConfig& a, const DeepseekDefaults& d) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-6});
  const std::string& path = c.path();
  MlaConfig& m = a.mla;
  m.kv_lora_rank = c.size_or("kv_lora_rank", 512);
  // q_lora_rank null: a plain q_proj; absent: the config class's default.
  m.q_lora_rank = !c.json().contains("q_lora_rank") ? d.q_lora_rank
                  : c.has("q_lora_rank")            ? c.size_("q_lora_rank")
                                                    : 0;
  m.qk_nope_head_dim = c.size_or("qk_nope_head_dim", 128);
  m.qk_rope_head_dim = c.size_or("qk_rope_head_dim", 64);
  m.v_head_dim = c.size_or("v_head_dim", 128);
  // The latent's keys and values have one head per query head; transformers' repeat_kv would
  // repeat them num_attention_heads / num_key_value_heads times more and fail.
  if (a.num_kv_heads != a.num_heads)
    throw UserError("num_key_value_heads " + std::to_string(a.num_kv_heads) +
                        " differs from num_attention_heads " + std::to_string(a.num_heads),
                    {path, 0, 0, "$.num_key_value_heads"},
                    "num_attention_heads (multi-head latent attention has a key per head)");
  a.head_dim = std::max(m.qk_head_dim(), m.v_head_dim);
  a.rotary_dim = m.qk_rope_head_dim;  // the config's head_dim is qk_rope_head_dim
  // yarn_apply_mscale: a non-default rope type with mscale_all_dim scales the softmax by
  // yarn_get_mscale(factor, mscale_all_dim)^2 beyond qk_head_dim^-0.5.
  a.attn_scale = 1.0 / std::sqrt(static_cast<double>(m.qk_head_dim()));
  const double mscale_all_dim = rope_param(c, "mscale_all_dim", 0.0);
  if (a.rope != RopeType::kDefault && mscale_all_dim != 0.0) {
    const double factor = rope_param(c, "factor", a.rope_factor);
    const double ms = factor <= 1.0 ? 1.0 : 0.1 * mscale_all_dim * std::log(factor) + 1.0;
    a.attn_scale *= ms * ms;
  }

  MoeConfig& e = a.moe;
  // attribute_map: num_experts (V2) / num_local_experts (V3) are other names of n_routed_experts.
  const char* experts = c.has("n_routed_experts")    ? "n_routed_experts"
                        : c.has("num_experts")       ? "num_experts"
                        : c.has("num_local_experts") ? "num_local_experts"
                                                     : "n_routed_experts";
  e.num_experts = c.size_or(experts, d.n_routed_experts);
  e.top_k = c.has("num_experts_per_tok") || d.top_k == 0 ? c.size_("num_experts_per_tok") : d.top_k;
  if (e.top_k > e.num_experts)
    throw UserError("num_experts_per_tok " + std::to_string(e.top_k) + " exceeds the " +
                        std::to_string(e.num_experts) + " experts",
                    {path, 0, 0, "$.num_experts_per_tok"}, "at most n_routed_experts");
  e.expert_intermediate = c.size_or("moe_intermediate_size", d.moe_intermediate_size);
  e.shared_intermediate = e.expert_intermediate * c.size_or("n_shared_experts", d.n_shared_experts);
  e.routed_scaling_factor = c.num_or("routed_scaling_factor", d.routed_scaling_factor);
  // DeepseekV2DecoderLayer: the MoE block from layer first_k_dense_replace on (transformers
  // reads no moe_layer_freq).
  const int64_t first_dense = c.int_or("first_k_dense_replace", d.first_k_dense_replace);
  a.layer_moe.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers; ++i) a.layer_moe[i] = i >= first_dense;
  if (c.bool_or("mlp_bias", false))
    throw UserError("mlp_bias is true", {path, 0, 0, "$.mlp_bias"},
                    "false (MLP biases are not supported for DeepSeek's shared experts)");
}

void parse_expert_groups(const ConfigReader& c, ArchConfig& a, int64_t default_groups,
                         int64_t default_topk_group, int64_t min_group_size) {
  MoeConfig& e = a.moe;
  e.n_group = c.size_or("n_group", default_groups);
  e.topk_group = c.size_or("topk_group", default_topk_group);
  if (e.num_experts % e.n_group != 0 || e.num_experts / e.n_group < min_group_size)
    throw UserError("n_group " + std::to_string(e.n_group) + " does not divide the " +
                        std::to_string(e.num_experts) + " experts into groups of at least " +
                        std::to_string(min_group_size),
                    {c.path(), 0, 0, "$.n_group"}, "a divisor of n_routed_experts");
  if (e.topk_group > e.n_group)
    throw UserError("topk_group " + std::to_string(e.topk_group) + " exceeds n_group",
                    {c.path(), 0, 0, "$.topk_group"}, "at most n_group");
}

void load_deepseek(WeightLoader& w) {
  DecoderNames n;  // Llama's names; the router mlp.gate (V3: its e_score_correction_bias)
  n.shared_expert = "mlp.shared_experts.";
  w.load_decoder(n);
}

namespace arch_deepseek_v2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_deepseek(c, a,
                 {.q_lora_rank = 1536,
                  .n_routed_experts = 64,
                  .top_k = 0,
                  .moe_intermediate_size = 1407,
                  .n_shared_experts = 2,
                  .routed_scaling_factor = 1.0,
                  .first_k_dense_replace = 0});
  a.rope_interleaved = true;  // apply_rotary_emb: complex products of pairs (2i, 2i+1)
  a.rope_in_float32 = true;   // ... of xq.float() with float32 freqs_cis
  a.rope_polar = true;        // freqs_cis = torch.polar(ones, freqs)
  a.moe.router = MoeRouter::kDeepseekV2;
  // norm_topk_prob is in DeepseekV2Config but DeepseekV2TopkRouter never reads it.
  const std::string method = c.str_or("topk_method", "greedy");
  if (method == "group_limited_greedy") {
    a.moe.group_limited = true;
    if (!c.has("n_group") || !c.has("topk_group"))
      throw UserError("topk_method group_limited_greedy needs n_group and topk_group",
                      {c.path(), 0, 0, c.has("n_group") ? "$.topk_group" : "$.n_group"},
                      "an integer");
    parse_expert_groups(c, a, 1, 1, 1);
  } else if (method != "greedy") {
    // DeepseekV2TopkRouter computes no weights for any other method (an UnboundLocalError).
    throw UserError("topk_method '" + method + "' is not one DeepSeek-V2 runs",
                    {c.path(), 0, 0, "$.topk_method"}, "greedy or group_limited_greedy");
  }
}

}  // namespace arch_deepseek_v2

extern const ArchSpec kDeepseekV2{"DeepseekV2ForCausalLM", "deepseek_v2", 2048,
                                  arch_deepseek_v2::parse, load_deepseek};

}  // namespace lmeval::hf

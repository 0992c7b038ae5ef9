// MPT (MptForCausalLM): ALiBi counted from the last key (build_mpt_alibi_tensor, slopes from
// attn_config.alibi_bias_max), LayerNorms and linear layers without biases, a fused Wqkv with
// rows [q; k; v], q/k/v clamped by attn_config.clip_qkv, a GELU MLP of 4·d_model. transformers'
// MPT builds 4·d_model and ALiBi (with alibi_bias_max 8) whatever expansion_ratio,
// attn_config.alibi, attn_config.alibi_bias_max, no_bias and learned_pos_emb say, and does not
// use logit_scale: so does this file.
#include <cmath>

#include "lmeval/core/error.hpp"
#include "models/hf/alibi.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_mpt {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_or("d_model", 2048);  // MptConfig's defaults
  a.num_heads = c.size_or("n_heads", 16);
  a.num_layers = c.size_or("n_layers", 24);
  a.attention_impl = AttnImpl::kEager;  // MptAttention has no SDPA
  a.num_kv_heads = a.num_heads;
  a.intermediate_size = 4 * a.hidden_size;  // MptMLP
  a.norm = NormKind::kLayerNorm;
  a.norm_bias = false;
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
  a.activation = Activation::kGeluExact;
  a.gated_mlp = false;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  finish_heads(c, a);
  // MptAttentionConfig: absent or null fields take its defaults.
  const Json& j = c.json();
  Json attn = Json::object();
  if (c.has("attn_config")) {
    if (!j["attn_config"].is_object())
      throw UserError("attn_config is not a mapping", {c.path(), 0, 0, "$.attn_config"},
                      "a mapping such as {\"alibi_bias_max\": 8, \"clip_qkv\": null}");
    attn = j["attn_config"];
  }
  auto num = [&](const char* k, double def) {
    if (!attn.contains(k) || attn[k].is_null()) return def;
    if (!attn[k].is_number())
      throw UserError(std::string("attn_config.") + k + " is not a number",
                      {c.path(), 0, 0, std::string("$.attn_config.") + k}, "a number or null");
    return attn[k].get<double>();
  };
  a.attn_scale = num("softmax_scale", 1.0 / std::sqrt(static_cast<double>(a.hidden_size) /
                                                      static_cast<double>(a.num_heads)));
  a.clip_qkv = num("clip_qkv", 0.0);  // `if self.clip_qkv:`: 0 is off too
  a.alibi = Alibi::kFromLastKey;
  // MptModel.forward builds its ALiBi tensor with build_mpt_alibi_tensor's default
  // alibi_bias_max of 8, whatever attn_config.alibi_bias_max says.
  a.alibi_slopes = alibi_slopes_mpt(a.num_heads, 8.0);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, I = cfg.intermediate_size;
  const std::string p = "transformer.";
  w.m.embed = w.get(p, "wte.weight", {cfg.vocab_size, Hd});
  w.m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "blocks." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "norm_1.weight", {Hd});
    L.ln2_w = w.get(p, l + "norm_2.weight", {Hd});
    L.qkv_w = w.get(p, l + "attn.Wqkv.weight", {3 * Hd, Hd});
    L.o_w = w.get(p, l + "attn.out_proj.weight", {Hd, Hd});
    L.up_w = w.get(p, l + "ffn.up_proj.weight", {I, Hd});
    L.down_w = w.get(p, l + "ffn.down_proj.weight", {Hd, I});
  }
  w.m.final_w = w.get(p, "norm_f.weight", {Hd});
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("lm_head.weight", {cfg.vocab_size, Hd});
}

}  // namespace arch_mpt

// MptConfig has max_seq_len, which HFLM does not read (0: max_length from the tokenizer).
extern const ArchSpec kMpt{"MptForCausalLM", "mpt", 0, arch_mpt::parse, arch_mpt::load};

}  // namespace lmeval::hf

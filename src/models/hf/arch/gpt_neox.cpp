// GPT-NeoX / Pythia (GPTNeoXForCausalLM): LayerNorms, parallel (or sequential) residual,
// partial rotary (rotary_pct 0.25), a fused query_key_value laid out per head.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_gpt_neox {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_("hidden_size");
  a.num_layers = c.size_("num_hidden_layers");
  a.num_heads = c.size_("num_attention_heads");
  a.intermediate_size = c.size_("intermediate_size");
  a.max_position_embeddings = c.opt_size("max_position_embeddings");
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
  a.activation = parse_activation(c.str_or("hidden_act", "gelu"), c.path(), "$.hidden_act");
  a.gated_mlp = false;
  a.parallel_residual = c.bool_or("use_parallel_residual", true);
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  finish_heads(c, a);
  parse_rope(c, a, 0.25, 10000.0);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, hd = cfg.head_dim;
  const std::string p = "gpt_neox.";
  w.m.embed = w.get(p, "embed_in.weight", {cfg.vocab_size, Hd});
  w.m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "layers." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "input_layernorm.weight", {Hd});
    L.ln1_b = w.get(p, l + "input_layernorm.bias", {Hd});
    L.ln2_w = w.get(p, l + "post_attention_layernorm.weight", {Hd});
    L.ln2_b = w.get(p, l + "post_attention_layernorm.bias", {Hd});
    // query_key_value rows are [head][q|k|v][hd]; regroup to [q|k|v][head][hd].
    L.qkv_w = WeightLoader::per_head_qkv(
        w.get(p, l + "attention.query_key_value.weight", {3 * Hd, Hd}), H, hd);
    L.qkv_b = WeightLoader::per_head_qkv(
        w.get(p, l + "attention.query_key_value.bias", {3 * Hd}, false), H, hd);
    L.o_w = w.get(p, l + "attention.dense.weight", {Hd, Hd});
    L.o_b = w.get(p, l + "attention.dense.bias", {Hd}, false);
    w.load_h_to_4h_mlp(p, l, L, /*biases_required=*/true);
  }
  w.m.final_w = w.get(p, "final_layer_norm.weight", {Hd});
  w.m.final_b = w.get(p, "final_layer_norm.bias", {Hd});
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("embed_out.weight", {cfg.vocab_size, Hd});
}

}  // namespace arch_gpt_neox

extern const ArchSpec kGptNeoX{"GPTNeoXForCausalLM", "gpt_neox", 2048, arch_gpt_neox::parse,
                               arch_gpt_neox::load};

}  // namespace lmeval::hf

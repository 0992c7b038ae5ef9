// BLOOM (BloomForCausalLM): ALiBi instead of positions (the key's position times a slope per
// head), a LayerNorm on the word embeddings, a fused query_key_value with rows per head
// [q, k, v], biases everywhere, a GELU (tanh) MLP of 4·hidden, tied embeddings by default.
#include "lmeval/core/error.hpp"
#include "models/hf/alibi.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_bloom {

void parse(const ConfigReader& c, ArchConfig& a) {
  // BloomConfig's defaults; its n_embed kwarg overrides hidden_size.
  a.hidden_size = c.has("n_embed") ? c.size_("n_embed") : c.size_or("hidden_size", 64);
  a.num_layers = c.size_or("n_layer", 2);
  a.num_heads = c.size_or("n_head", 8);
  a.attention_impl = AttnImpl::kEagerFusedBias;  // BloomAttention has no SDPA
  if (a.hidden_size % a.num_heads != 0)          // BloomAttention raises ValueError
    throw UserError("hidden_size " + std::to_string(a.hidden_size) +
                        " is not divisible by n_head " + std::to_string(a.num_heads),
                    {c.path(), 0, 0, "$.n_head"}, "a divisor of hidden_size");
  a.num_kv_heads = a.num_heads;
  a.intermediate_size = 4 * a.hidden_size;
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
  a.activation = Activation::kGeluBloom;  // bloom_gelu_forward
  a.gated_mlp = false;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  a.embed_norm = true;
  a.residual_from_norm = c.bool_or("apply_residual_connection_post_layernorm", false);
  finish_heads(c, a);
  a.alibi = Alibi::kKeyPosition;
  a.alibi_slopes = alibi_slopes_bloom(a.num_heads);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, hd = cfg.head_dim;
  const std::string p = "transformer.";
  // BloomAttention._reshape: rows per head [q, k, v], regrouped to [q heads; k heads; v heads].
  auto regroup = [&](const Tensor& t) { return WeightLoader::per_head_qkv(t, H, hd); };
  w.m.embed = w.get(p, "word_embeddings.weight", {cfg.vocab_size, Hd});
  w.m.embed_norm_w = w.get(p, "word_embeddings_layernorm.weight", {Hd});
  w.m.embed_norm_b = w.get(p, "word_embeddings_layernorm.bias", {Hd});
  w.m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "h." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "input_layernorm.weight", {Hd});
    L.ln1_b = w.get(p, l + "input_layernorm.bias", {Hd});
    L.ln2_w = w.get(p, l + "post_attention_layernorm.weight", {Hd});
    L.ln2_b = w.get(p, l + "post_attention_layernorm.bias", {Hd});
    L.qkv_w = regroup(w.get(p, l + "self_attention.query_key_value.weight", {3 * Hd, Hd}));
    L.qkv_b = regroup(w.get(p, l + "self_attention.query_key_value.bias", {3 * Hd}));
    L.o_w = w.get(p, l + "self_attention.dense.weight", {Hd, Hd});
    L.o_b = w.get(p, l + "self_attention.dense.bias", {Hd});
    w.load_h_to_4h_mlp(p, l, L, /*biases_required=*/true);
  }
  w.m.final_w = w.get(p, "ln_f.weight", {Hd});
  w.m.final_b = w.get(p, "ln_f.bias", {Hd});
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("lm_head.weight", {cfg.vocab_size, Hd});
}

}  // namespace arch_bloom

// BloomConfig has no max_position_embeddings (0: HFLM's max_length comes from the tokenizer).
extern const ArchSpec kBloom{"BloomForCausalLM", "bloom", 0, arch_bloom::parse, arch_bloom::load};

}  // namespace lmeval::hf

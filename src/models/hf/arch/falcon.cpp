// Falcon (FalconForCausalLM): LayerNorms, a fused query_key_value in one of three layouts
// (Falcon-40B/180B's new_decoder_architecture: per kv group [q..., k, v]; multi_query (7B):
// [q; k; v] with one kv head; otherwise per head [q, k, v]), attention and a GELU MLP in
// parallel from one shared norm (7B) or from two (ln_attn, ln_mlp), or sequential.
// ALiBi Falcons (falcon-rw) have no rotary embedding.
#include "models/hf/alibi.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_falcon {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_("hidden_size");
  a.num_layers = c.size_("num_hidden_layers");
  a.num_heads = c.size_("num_attention_heads");
  const bool new_arch = c.bool_or("new_decoder_architecture", false);
  if (new_arch)
    a.num_kv_heads = c.size_or("num_kv_heads", a.num_heads);
  else if (c.bool_or("multi_query", true))
    a.num_kv_heads = 1;
  else
    a.num_kv_heads = a.num_heads;
  a.intermediate_size = c.size_or("ffn_hidden_size", 4 * a.hidden_size);
  a.max_position_embeddings = c.opt_size("max_position_embeddings");
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
  a.activation = parse_activation(c.str_or("activation", "gelu"), c.path(), "$.activation");
  a.gated_mlp = false;
  a.bias_after_product = true;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  // FalconDecoderLayer: new_decoder_architecture is parallel, with two norms unless
  // num_ln_in_parallel_attn says one.
  a.parallel_residual = new_arch || c.bool_or("parallel_attn", true);
  const int64_t norms = new_arch ? c.int_or("num_ln_in_parallel_attn", 2) : 1;
  a.shared_layer_norm = a.parallel_residual && norms != 2;
  finish_heads(c, a);
  if (c.bool_or("alibi", false)) {  // falcon-rw: ALiBi instead of rotary embeddings
    a.alibi = Alibi::kKeyPositionBf16;
    a.alibi_slopes = alibi_slopes_bloom(a.num_heads);
  } else {
    parse_rope(c, a, 1.0, 10000.0);
  }
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, KV = cfg.num_kv_heads, hd = cfg.head_dim;
  const int64_t rep = H / KV;
  const std::string p = "transformer.";
  w.m.embed = w.get(p, "word_embeddings.weight", {cfg.vocab_size, Hd});
  w.m.layers.resize(cfg.num_layers);
  // Rows of the fused projection regrouped to [q heads; k heads; v heads].
  auto regroup = [&](const Tensor& t) {
    if (!t.defined()) return t;
    const int64_t cols = t.dim() == 2 ? Hd : 1;
    Tensor x = t.reshape({-1, hd, cols});
    if (KV == H && rep == 1 && KV > 1 && x.size(0) == 3 * H) {  // per head [q, k, v]
      x = x.view({H, 3, hd, cols}).transpose(0, 1);
    } else {  // per kv group [q..., k, v] (multi-query: one group)
      Tensor g = x.view({KV, rep + 2, hd, cols});
      x = at::cat({g.narrow(1, 0, rep).reshape({KV * rep, hd, cols}),
                   g.narrow(1, rep, 1).reshape({KV, hd, cols}),
                   g.narrow(1, rep + 1, 1).reshape({KV, hd, cols})},
                  0);
    }
    return t.dim() == 2 ? x.reshape({-1, Hd}).contiguous() : x.reshape({-1}).contiguous();
  };
  const bool two_norms = cfg.parallel_residual && !cfg.shared_layer_norm;
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "h." + std::to_string(i) + ".";
    const std::string n1 = two_norms ? "ln_attn" : "input_layernorm";
    L.ln1_w = w.get(p, l + n1 + ".weight", {Hd});
    L.ln1_b = w.get(p, l + n1 + ".bias", {Hd});
    if (!cfg.shared_layer_norm) {
      const std::string n2 = two_norms ? "ln_mlp" : "post_attention_layernorm";
      L.ln2_w = w.get(p, l + n2 + ".weight", {Hd});
      L.ln2_b = w.get(p, l + n2 + ".bias", {Hd});
    }
    const int64_t qkv_rows = (H + 2 * KV) * hd;
    L.qkv_w = regroup(w.get(p, l + "self_attention.query_key_value.weight", {qkv_rows, Hd}));
    L.qkv_b = regroup(w.get(p, l + "self_attention.query_key_value.bias", {qkv_rows}, false));
    L.o_w = w.get(p, l + "self_attention.dense.weight", {Hd, H * hd});
    L.o_b = w.get(p, l + "self_attention.dense.bias", {Hd}, false);
    w.load_h_to_4h_mlp(p, l, L, /*biases_required=*/false);
  }
  w.m.final_w = w.get(p, "ln_f.weight", {Hd});
  w.m.final_b = w.get(p, "ln_f.bias", {Hd});
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("lm_head.weight", {cfg.vocab_size, Hd});
}

}  // namespace arch_falcon

extern const ArchSpec kFalcon{"FalconForCausalLM", "falcon", 2048, arch_falcon::parse,
                              arch_falcon::load};

}  // namespace lmeval::hf

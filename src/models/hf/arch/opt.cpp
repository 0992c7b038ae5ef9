// OPT (OPTForCausalLM): learned positions offset by 2, LayerNorms, a ReLU MLP; opt-350m's
// layout has norms after the residual adds, no final norm, and embeddings of
// word_embed_proj_dim projected in to hidden_size and out again before the (tied) LM head.
#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_opt {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_("hidden_size");
  a.num_layers = c.size_("num_hidden_layers");
  a.num_heads = c.size_("num_attention_heads");
  a.intermediate_size = c.size_("ffn_dim");
  a.max_position_embeddings = c.opt_size("max_position_embeddings");
  a.learned_positions = c.size_or("max_position_embeddings", 2048) + 2;
  a.position_offset = 2;
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = 1e-5;
  a.activation =
      parse_activation(c.str_or("activation_function", "relu"), c.path(), "$.activation_function");
  a.gated_mlp = false;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  // OPTDecoder keeps a final norm only with do_layer_norm_before and not
  // _remove_final_layer_norm.
  a.post_norm = !c.bool_or("do_layer_norm_before", true);
  a.final_norm = !a.post_norm && !c.bool_or("_remove_final_layer_norm", false);
  const int64_t proj = c.size_or("word_embed_proj_dim", a.hidden_size);
  if (proj != a.hidden_size) a.embed_proj_dim = proj;
  if (!c.bool_or("layer_norm_elementwise_affine", true))
    throw UserError("OPT without layer norm weights is not supported",
                    {c.path(), 0, 0, "$.layer_norm_elementwise_affine"}, "true");
  finish_heads(c, a);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, I = cfg.intermediate_size;
  const std::string p = "model.decoder.";
  const int64_t E = cfg.embed_proj_dim > 0 ? cfg.embed_proj_dim : Hd;
  w.m.embed = w.get(p, "embed_tokens.weight", {cfg.vocab_size, E});
  w.m.pos_embed = w.get(p, "embed_positions.weight", {cfg.learned_positions, Hd});
  if (cfg.embed_proj_dim > 0) {
    w.m.proj_in = w.get(p, "project_in.weight", {Hd, E});
    w.m.proj_out = w.get(p, "project_out.weight", {E, Hd});
  }
  w.m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "layers." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "self_attn_layer_norm.weight", {Hd});
    L.ln1_b = w.get(p, l + "self_attn_layer_norm.bias", {Hd});
    L.ln2_w = w.get(p, l + "final_layer_norm.weight", {Hd});
    L.ln2_b = w.get(p, l + "final_layer_norm.bias", {Hd});
    L.qkv_w = WeightLoader::cat0({w.get(p, l + "self_attn.q_proj.weight", {Hd, Hd}),
                                  w.get(p, l + "self_attn.k_proj.weight", {Hd, Hd}),
                                  w.get(p, l + "self_attn.v_proj.weight", {Hd, Hd})});
    L.qkv_b = WeightLoader::cat0({w.get(p, l + "self_attn.q_proj.bias", {Hd}, false),
                                  w.get(p, l + "self_attn.k_proj.bias", {Hd}, false),
                                  w.get(p, l + "self_attn.v_proj.bias", {Hd}, false)});
    L.o_w = w.get(p, l + "self_attn.out_proj.weight", {Hd, Hd});
    L.o_b = w.get(p, l + "self_attn.out_proj.bias", {Hd}, false);
    L.up_w = w.get(p, l + "fc1.weight", {I, Hd});
    L.up_b = w.get(p, l + "fc1.bias", {I}, false);
    L.down_w = w.get(p, l + "fc2.weight", {Hd, I});
    L.down_b = w.get(p, l + "fc2.bias", {Hd}, false);
  }
  if (cfg.final_norm) {
    w.m.final_w = w.get(p, "final_layer_norm.weight", {Hd});
    w.m.final_b = w.get(p, "final_layer_norm.bias", {Hd});
  }
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("lm_head.weight", {cfg.vocab_size, E});
}

}  // namespace arch_opt

extern const ArchSpec kOpt{"OPTForCausalLM", "opt", 2048, arch_opt::parse, arch_opt::load};

}  // namespace lmeval::hf

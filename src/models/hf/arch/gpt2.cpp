// GPT-2 (GPT2LMHeadModel): learned positions, LayerNorms, Conv1D weights stored [in, out], a
// fused c_attn projection and a GELU (tanh) MLP.
#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

// GPT2Config's fields (GPTBigCode's too), with the family's default activation.
void parse_gpt2_shape(const ConfigReader& c, ArchConfig& a, const char* default_activation) {
  a.hidden_size = c.size_("n_embd");
  a.num_layers = c.size_("n_layer");
  a.num_heads = c.size_("n_head");
  a.intermediate_size = c.size_or("n_inner", 4 * a.hidden_size);
  a.max_position_embeddings = c.opt_size("n_positions");
  a.learned_positions = c.size_or("n_positions", 1024);
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
  a.activation = parse_activation(c.str_or("activation_function", default_activation), c.path(),
                                  "$.activation_function");
  a.gated_mlp = false;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  finish_heads(c, a);
  if (!c.bool_or("scale_attn_weights", true)) a.attn_scale = 1.0;
  a.layer_sliding_window.assign(a.num_layers, 0);
}

namespace arch_gpt2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_gpt2_shape(c, a, "gelu_new");
  if (c.bool_or("scale_attn_by_inverse_layer_idx", false))
    throw UserError("scale_attn_by_inverse_layer_idx is not supported",
                    {c.path(), 0, 0, "$.scale_attn_by_inverse_layer_idx"}, "false");
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, I = cfg.intermediate_size;
  const std::string p = "transformer.";
  w.m.embed = w.get(p, "wte.weight", {cfg.vocab_size, Hd});
  w.m.pos_embed = w.get(p, "wpe.weight", {cfg.learned_positions, Hd});
  w.m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "h." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "ln_1.weight", {Hd});
    L.ln1_b = w.get(p, l + "ln_1.bias", {Hd});
    L.ln2_w = w.get(p, l + "ln_2.weight", {Hd});
    L.ln2_b = w.get(p, l + "ln_2.bias", {Hd});
    L.qkv_w = w.conv1d(p, l + "attn.c_attn.weight", Hd, 3 * Hd);
    L.qkv_b = w.get(p, l + "attn.c_attn.bias", {3 * Hd});
    L.o_w = w.conv1d(p, l + "attn.c_proj.weight", Hd, Hd);
    L.o_b = w.get(p, l + "attn.c_proj.bias", {Hd});
    L.up_w = w.conv1d(p, l + "mlp.c_fc.weight", Hd, I);
    L.up_b = w.get(p, l + "mlp.c_fc.bias", {I});
    L.down_w = w.conv1d(p, l + "mlp.c_proj.weight", I, Hd);
    L.down_b = w.get(p, l + "mlp.c_proj.bias", {Hd});
  }
  w.m.final_w = w.get(p, "ln_f.weight", {Hd});
  w.m.final_b = w.get(p, "ln_f.bias", {Hd});
}

}  // namespace arch_gpt2

extern const ArchSpec kGpt2{"GPT2LMHeadModel", "gpt2", 1024, arch_gpt2::parse, arch_gpt2::load};

}  // namespace lmeval::hf

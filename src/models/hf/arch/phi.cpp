// Phi-1/1.5/2 (PhiForCausalLM): one LayerNorm feeding attention and a GELU MLP in parallel,
// partial rotary (0.5), optional LayerNorms over each head's q and k (qk_layernorm), biases
// everywhere including the LM head.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_phi {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_("hidden_size");
  a.num_layers = c.size_("num_hidden_layers");
  a.num_heads = c.size_("num_attention_heads");
  a.num_kv_heads = c.size_or("num_key_value_heads", a.num_heads);
  a.intermediate_size = c.size_("intermediate_size");
  a.max_position_embeddings = c.opt_size("max_position_embeddings");
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
  a.activation = parse_activation(c.str_or("hidden_act", "gelu_new"), c.path(), "$.hidden_act");
  a.gated_mlp = false;
  a.parallel_residual = true;
  a.shared_layer_norm = true;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  if (c.bool_or("qk_layernorm", false)) a.qk_norm = QkNorm::kPerHead;
  finish_heads(c, a);
  parse_rope(c, a, 0.5, 10000.0);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.ln2 = "";
  n.o = "self_attn.dense";
  n.q_norm = "self_attn.q_layernorm";
  n.k_norm = "self_attn.k_layernorm";
  n.final_norm = "final_layernorm";
  n.head_bias = true;
  w.load_decoder(n);
}

}  // namespace arch_phi

extern const ArchSpec kPhi{"PhiForCausalLM", "phi", 2048, arch_phi::parse, arch_phi::load};

}  // namespace lmeval::hf

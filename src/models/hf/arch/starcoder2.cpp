// StarCoder2 (Starcoder2ForCausalLM): Llama's layout with LayerNorms (with biases), a plain
// GELU (tanh) MLP c_fc/c_proj, biases on every projection (use_bias), a sliding window on every
// layer and tied embeddings by default.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_starcoder2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.tie_word_embeddings = true});
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("norm_epsilon", 1e-5);
  a.gated_mlp = false;
  a.activation =
      parse_activation(c.str_or("hidden_act", "gelu_pytorch_tanh"), c.path(), "$.hidden_act");
  (void)c.bool_or("use_bias", true);  // the loader takes the biases the checkpoint has
  const int64_t window = c.int_or("sliding_window", 0);
  if (window > 0) a.layer_sliding_window.assign(a.num_layers, window);
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.fc1 = "mlp.c_fc";
  n.fc2 = "mlp.c_proj";
  w.load_decoder(n);
}

}  // namespace arch_starcoder2

extern const ArchSpec kStarcoder2{"Starcoder2ForCausalLM", "starcoder2", 4096,
                                  arch_starcoder2::parse, arch_starcoder2::load};

}  // namespace lmeval::hf

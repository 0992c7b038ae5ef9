// StableLM (StableLmForCausalLM): LayerNorms with biases, partial rotary (0.25), optional q/k/v
// biases (use_qkv_bias), optional LayerNorms over q and k with a module per head (qk_layernorm),
// and a parallel residual through the input norm when use_parallel_residual.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_stablelm {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  a.norm = NormKind::kLayerNorm;
  a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
  parse_rope(c, a, 0.25, 10000.0);
  if (c.bool_or("qk_layernorm", false)) a.qk_norm = QkNorm::kPerHeadWeights;
  a.parallel_residual = c.bool_or("use_parallel_residual", false);
  a.shared_layer_norm = a.parallel_residual;
  // StableLmDecoderLayer: residual + self_attn_output + mlp_output, added left to right (the
  // order shows in float16/bfloat16).
  a.residual_added_first = a.parallel_residual;
  (void)c.bool_or("use_qkv_bias", false);  // the loader takes the biases the checkpoint has
}

void load(WeightLoader& w) {
  DecoderNames n;
  if (w.cfg.parallel_residual) n.ln2 = "";
  n.q_norm = "self_attn.q_layernorm";
  n.k_norm = "self_attn.k_layernorm";
  w.load_decoder(n);
}

}  // namespace arch_stablelm

extern const ArchSpec kStableLm{"StableLmForCausalLM", "stablelm", 4096, arch_stablelm::parse,
                                arch_stablelm::load};

}  // namespace lmeval::hf

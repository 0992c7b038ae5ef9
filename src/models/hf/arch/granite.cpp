// Granite (GraniteForCausalLM): Llama with four scalars: embeddings times embedding_multiplier,
// attention scaled by attention_multiplier (not 1/√head_dim), each branch output times
// residual_multiplier before its residual add, and logits divided by logits_scaling.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_granite {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  (void)c.bool_or("attention_bias", false);
  (void)c.bool_or("mlp_bias", false);
  a.embedding_multiplier = c.num_or("embedding_multiplier", 1.0);
  a.attn_scale = c.num_or("attention_multiplier", 1.0);
  a.residual_multiplier = c.num_or("residual_multiplier", 1.0);
  a.logits_divisor = c.num_or("logits_scaling", 1.0);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_granite

extern const ArchSpec kGranite{"GraniteForCausalLM", "granite", 2048, arch_granite::parse,
                               arch_granite::load};

}  // namespace lmeval::hf

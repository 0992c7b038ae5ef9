// Llama (LlamaForCausalLM): the reference decoder the other families are written against.
// Optional attention and MLP biases (attention_bias, mlp_bias) are taken when present.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_llama {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  // The weight loader takes whichever biases the checkpoint has; the flags are checked only.
  (void)c.bool_or("attention_bias", false);
  (void)c.bool_or("mlp_bias", false);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_llama

extern const ArchSpec kLlama{"LlamaForCausalLM", "llama", 2048, arch_llama::parse,
                             arch_llama::load};

}  // namespace lmeval::hf

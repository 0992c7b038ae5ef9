// Mistral (MistralForCausalLM): Llama with one sliding window on every layer.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_mistral {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  const int64_t window = c.int_or("sliding_window", 0);
  if (window > 0) a.layer_sliding_window.assign(a.num_layers, window);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_mistral

extern const ArchSpec kMistral{"MistralForCausalLM", "mistral", 131072, arch_mistral::parse,
                               arch_mistral::load};

}  // namespace lmeval::hf

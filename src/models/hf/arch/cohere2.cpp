// Command R7B (Cohere2ForCausalLM): Cohere with three sliding-window layers to one global
// (layer_types), rotary embedding only on the sliding layers (the global ones are NoPE).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_cohere_common(const ConfigReader& c, ArchConfig& a);  // cohere.cpp
void load_cohere_weights(WeightLoader& w);                       // cohere.cpp

namespace arch_cohere2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_cohere_common(c, a);
  a.qk_norm = QkNorm::kNone;
  const int64_t window = c.int_or("sliding_window", 4096);
  if (!parse_layer_types(c, a, window)) {
    const int64_t every = c.size_or("sliding_window_pattern", 4);
    for (int64_t i = 0; i < a.num_layers; ++i)
      a.layer_sliding_window[i] = (i + 1) % every ? window : 0;
  }
  // Cohere2Attention rotates only where it has a sliding window.
  a.layer_rope.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers; ++i) a.layer_rope[i] = a.layer_sliding_window[i] > 0;
}

}  // namespace arch_cohere2

extern const ArchSpec kCohere2{"Cohere2ForCausalLM", "cohere2", 8192, arch_cohere2::parse,
                               load_cohere_weights};

}  // namespace lmeval::hf

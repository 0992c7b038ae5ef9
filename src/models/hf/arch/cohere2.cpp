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
  parse_window_pattern(c, a, c.int_or("sliding_window", 4096),
                       c.size_or("sliding_window_pattern", 4));
  rope_on_sliding_layers_only(a);  // Cohere2Attention rotates only where it has a window
}

}  // namespace arch_cohere2

extern const ArchSpec kCohere2{"Cohere2ForCausalLM", "cohere2", 8192, arch_cohere2::parse,
                               load_cohere_weights};

}  // namespace lmeval::hf

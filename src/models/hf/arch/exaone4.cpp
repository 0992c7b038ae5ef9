// EXAONE 4 (Exaone4ForCausalLM): OLMo 2's block (RMS norms on the branch outputs only) with RMS
// norms over each head's q and k; with a sliding window, three sliding layers to one global
// (layer_types / sliding_window_pattern) and rotary embedding only on the sliding ones.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void load_olmo2_weights(WeightLoader& w);  // olmo2.cpp

namespace arch_exaone4 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5});
  a.pre_norm = false;
  a.branch_norms = true;
  a.qk_norm = QkNorm::kPerHead;
  if (!c.has("sliding_window")) return;  // Exaone4Config: no window, no pattern: rotary everywhere
  const int64_t window = c.int_("sliding_window");
  if (!parse_layer_types(c, a, window)) {
    const int64_t every = c.size_or("sliding_window_pattern", 4);
    for (int64_t i = 0; i < a.num_layers; ++i)
      a.layer_sliding_window[i] = (i + 1) % every ? window : 0;
  }
  // Exaone4Attention: "global NoPE for hybrid attention".
  a.layer_rope.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers; ++i) a.layer_rope[i] = a.layer_sliding_window[i] > 0;
}

}  // namespace arch_exaone4

extern const ArchSpec kExaone4{"Exaone4ForCausalLM", "exaone4", 2048, arch_exaone4::parse,
                               load_olmo2_weights};

}  // namespace lmeval::hf

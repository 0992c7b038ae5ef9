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
  parse_window_pattern(c, a, c.int_("sliding_window"), c.size_or("sliding_window_pattern", 4));
  rope_on_sliding_layers_only(a);  // Exaone4Attention: "global NoPE for hybrid attention"
}

}  // namespace arch_exaone4

extern const ArchSpec kExaone4{"Exaone4ForCausalLM", "exaone4", 2048, arch_exaone4::parse,
                               load_olmo2_weights};

}  // namespace lmeval::hf

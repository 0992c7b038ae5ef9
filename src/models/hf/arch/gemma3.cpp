// Gemma 3 text (Gemma3ForCausalLM, model_type gemma3_text): Gemma2's sandwich norms with Gemma's
// zero-centred RMS norms over each head's q and k too, five sliding-window layers to one global
// (layer_types), the sliding layers rotating with their own base (10000) and the global ones
// with rope_parameters.full_attention (1e6, often linear-scaled), no soft-capping by default.
#include <cmath>

#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_gemma_common(const ConfigReader& c, ArchConfig& a);  // gemma.cpp
void load_gemma_sandwich_weights(WeightLoader& w);              // gemma2.cpp

namespace arch_gemma3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_gemma_common(c, a);
  parse_layer_type_rope(c, a, 1e6, c.num_or("rope_local_base_freq", 10000.0));
  // Gemma3TextConfig: sliding unless (i + 1) is a multiple of sliding_window_pattern (6).
  parse_window_pattern(c, a, c.int_or("sliding_window", 4096),
                       c.size_or("sliding_window_pattern", 6));
  a.branch_norms = true;
  a.qk_norm = QkNorm::kPerHead;
  a.attn_scale = 1.0 / std::sqrt(c.num_or("query_pre_attn_scalar", 256.0));
  a.attn_softcap = c.num_or("attn_logit_softcapping", 0.0);
  a.final_softcap = c.num_or("final_logit_softcapping", 0.0);
}

}  // namespace arch_gemma3

extern const ArchSpec kGemma3{"Gemma3ForCausalLM", "gemma3_text", 131072, arch_gemma3::parse,
                              load_gemma_sandwich_weights};

}  // namespace lmeval::hf

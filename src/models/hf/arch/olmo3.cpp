// OLMo 3 (Olmo3ForCausalLM): OLMo 2 with three sliding-window layers to one full one
// (layer_types) and rotary settings per layer type.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_olmo2_layout(ArchConfig& a);    // olmo2.cpp
void load_olmo2_weights(WeightLoader& w);  // olmo2.cpp

namespace arch_olmo3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5, .rope_theta = 500000.0});
  parse_olmo2_layout(a);
  // Olmo3Config's convert_rope_params_to_dict gives the sliding layers default_theta when the
  // config is in the flat form (rope_theta went to the full layers).
  parse_layer_type_rope(c, a, 500000.0, 500000.0);
  parse_window_pattern(c, a, c.int_or("sliding_window", 4096), 4);
}

}  // namespace arch_olmo3

extern const ArchSpec kOlmo3{"Olmo3ForCausalLM", "olmo3", 2048, arch_olmo3::parse,
                             load_olmo2_weights};

}  // namespace lmeval::hf

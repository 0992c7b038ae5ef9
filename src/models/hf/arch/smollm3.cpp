// SmolLM3 (SmolLM3ForCausalLM): Llama whose every no_rope_layer_interval-th layer has no rotary
// embedding (NoPE), as no_rope_layers lists (1 = rotary); sliding windows only on NoPE layers
// with use_sliding_window, as SmolLM3Config derives layer_types.
#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_smollm3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-6, .tie_word_embeddings = true, .rope_theta = 2e6});
  a.layer_rope.assign(a.num_layers, 1);
  if (c.has("no_rope_layers")) {
    const Json& list = c.json()["no_rope_layers"];
    if (!list.is_array() || static_cast<int64_t>(list.size()) < a.num_layers)
      throw UserError("no_rope_layers does not have one entry per layer",
                      {c.path(), 0, 0, "$.no_rope_layers"},
                      "a list of num_hidden_layers 0/1 values");
    for (int64_t i = 0; i < a.num_layers; ++i) {
      if (!list[i].is_number_integer() && !list[i].is_boolean())
        throw UserError("no_rope_layers holds " + list[i].dump(),
                        {c.path(), 0, 0, "$.no_rope_layers"}, "0 or 1 per layer");
      a.layer_rope[i] = list[i].is_boolean() ? list[i].get<bool>() : list[i].get<int64_t>() != 0;
    }
  } else {
    const int64_t every = c.size_or("no_rope_layer_interval", 4);
    for (int64_t i = 0; i < a.num_layers; ++i) a.layer_rope[i] = (i + 1) % every != 0;
  }
  const int64_t window = c.int_or("sliding_window", 0);
  if (c.bool_or("use_sliding_window", false) && window > 0) {
    if (!parse_layer_types(c, a, window))
      for (int64_t i = 0; i < a.num_layers; ++i)
        if (!a.layer_rope[i]) a.layer_sliding_window[i] = window;
  }
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_smollm3

extern const ArchSpec kSmolLM3{"SmolLM3ForCausalLM", "smollm3", 32768, arch_smollm3::parse,
                               arch_smollm3::load};

}  // namespace lmeval::hf

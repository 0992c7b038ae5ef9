// Qwen2 (Qwen2ForCausalLM): Llama with q/k/v biases and sliding windows from max_window_layers
// on, when use_sliding_window is set (or as layer_types says).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

// Qwen2Config / Qwen3Config: sliding windows only with use_sliding_window; layer_types when
// transformers 5 wrote it, else the layers from max_window_layers on.
void parse_qwen_windows(const ConfigReader& c, ArchConfig& a) {
  const int64_t window = c.int_or("sliding_window", 0);
  if (!parse_layer_types(c, a, window) && c.bool_or("use_sliding_window", false) && window > 0) {
    const int64_t from = c.int_or("max_window_layers", a.num_layers);
    for (int64_t i = from; i < a.num_layers; ++i) a.layer_sliding_window[i] = window;
  }
  if (!c.bool_or("use_sliding_window", false)) a.layer_sliding_window.assign(a.num_layers, 0);
}

namespace arch_qwen2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  parse_qwen_windows(c, a);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_qwen2

extern const ArchSpec kQwen2{"Qwen2ForCausalLM", "qwen2", 32768, arch_qwen2::parse,
                             arch_qwen2::load};

}  // namespace lmeval::hf

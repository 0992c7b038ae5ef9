// Qwen3 (Qwen3ForCausalLM): Qwen2 with RMS norms over each head's q and k and no q/k/v biases.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_qwen_windows(const ConfigReader& c, ArchConfig& a);  // qwen2.cpp

namespace arch_qwen3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  a.qk_norm = QkNorm::kPerHead;
  parse_qwen_windows(c, a);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_qwen3

extern const ArchSpec kQwen3{"Qwen3ForCausalLM", "qwen3", 32768, arch_qwen3::parse,
                             arch_qwen3::load};

}  // namespace lmeval::hf

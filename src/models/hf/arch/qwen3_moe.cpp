// Qwen3-MoE (Qwen3MoeForCausalLM): Qwen3 (q/k norms per head) with Qwen2-MoE's routed experts
// and no shared expert.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_qwen_windows(const ConfigReader& c, ArchConfig& a);  // qwen2.cpp
void parse_qwen_moe(const ConfigReader& c, ArchConfig& a);      // qwen2_moe.cpp

namespace arch_qwen3_moe {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  a.qk_norm = QkNorm::kPerHead;
  parse_qwen_windows(c, a);
  parse_qwen_moe(c, a);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_qwen3_moe

extern const ArchSpec kQwen3Moe{"Qwen3MoeForCausalLM", "qwen3_moe", 32768, arch_qwen3_moe::parse,
                                arch_qwen3_moe::load};

}  // namespace lmeval::hf

// Qwen2-MoE (Qwen2MoeForCausalLM): Qwen2 whose MLPs (every decoder_sparse_step-th layer, not in
// mlp_only_layers) are mixtures of moe_intermediate_size experts plus one shared expert gated by
// a sigmoid; the top-k weights renormalised only with norm_topk_prob.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_qwen_windows(const ConfigReader& c, ArchConfig& a);  // qwen2.cpp

// The MoE fields Qwen2-MoE, Qwen3-MoE and OLMoE share.
void parse_qwen_moe(const ConfigReader& c, ArchConfig& a) {
  // Qwen3MoeConfig's attribute_map keeps num_experts as num_local_experts: either may be written.
  a.moe.num_experts = c.size_(c.has("num_experts") ? "num_experts" : "num_local_experts");
  a.moe.top_k = c.size_("num_experts_per_tok");
  a.moe.expert_intermediate = c.size_("moe_intermediate_size");
  a.moe.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  parse_moe_layers(c, a);
}

namespace arch_qwen2_moe {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  parse_qwen_windows(c, a);
  parse_qwen_moe(c, a);
  a.moe.shared_intermediate = c.size_("shared_expert_intermediate_size");
  a.moe.shared_gate = true;
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_qwen2_moe

extern const ArchSpec kQwen2Moe{"Qwen2MoeForCausalLM", "qwen2_moe", 32768, arch_qwen2_moe::parse,
                                arch_qwen2_moe::load};

}  // namespace lmeval::hf

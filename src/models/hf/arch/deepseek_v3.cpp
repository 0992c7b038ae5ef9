// DeepSeek-V3 (DeepseekV3ForCausalLM): DeepSeek-V2's multi-head latent attention (rotary pairs
// (2i, 2i+1) with rope_interleave, else rotate_half) and mixture of experts, with V3's router:
// sigmoid scores, the choice by score + e_score_correction_bias within the topk_group best of
// n_group groups (a group's score: its two best), the weights from the scores alone,
// renormalised with norm_topk_prob, times routed_scaling_factor.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/deepseek.hpp"

namespace lmeval::hf {

namespace arch_deepseek_v3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_deepseek(c, a,
                 {.q_lora_rank = 1536,
                  .n_routed_experts = 256,
                  .top_k = 8,
                  .moe_intermediate_size = 2048,
                  .n_shared_experts = 1,
                  .routed_scaling_factor = 2.5,
                  .first_k_dense_replace = 3});
  a.rope_interleaved = c.bool_or("rope_interleave", true);
  a.moe.router = MoeRouter::kDeepseekV3;
  a.moe.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  parse_expert_groups(c, a, 8, 4, 2);  // a group's score is the sum of its two best experts
}

}  // namespace arch_deepseek_v3

extern const ArchSpec kDeepseekV3{"DeepseekV3ForCausalLM", "deepseek_v3", 4096,
                                  arch_deepseek_v3::parse, load_deepseek};

}  // namespace lmeval::hf

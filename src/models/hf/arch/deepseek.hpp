// What DeepSeek-V2 and V3 share (arch/deepseek_v2.cpp): multi-head latent attention, the MoE
// layers with shared experts and their expert groups, the weight names. Torch-free.
#pragma once

#include <cstdint>

#include "models/hf/arch/config_reader.hpp"

namespace lmeval::hf {

class WeightLoader;

// The config class's defaults for fields a config.json may leave out.
struct DeepseekDefaults {
  int64_t q_lora_rank;
  int64_t n_routed_experts;
  int64_t top_k;  // 0: num_experts_per_tok is required (DeepseekV2Config's default is None)
  int64_t moe_intermediate_size;
  int64_t n_shared_experts;
  double routed_scaling_factor;
  int64_t first_k_dense_replace;
};

// Llama's shape with multi-head latent attention (the softmax scale with YaRN's mscale) and the
// MoE layers (experts, shared experts, scaling, first_k_dense_replace); the router is the family's.
void parse_deepseek(const ConfigReader& c, ArchConfig& a, const DeepseekDefaults& d);

// n_group groups of at least min_group_size experts each, topk_group of them kept.
void parse_expert_groups(const ConfigReader& c, ArchConfig& a, int64_t default_groups,
                         int64_t default_topk_group, int64_t min_group_size);

void load_deepseek(WeightLoader& w);

}  // namespace lmeval::hf

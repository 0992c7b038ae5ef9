// Mixtral (MixtralForCausalLM): Mistral whose every MLP is a mixture of num_local_experts gated
// experts of intermediate_size, the top num_experts_per_tok renormalised to sum to one.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_mixtral {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5, .rope_theta = 1e6});
  const int64_t window = c.int_or("sliding_window", 0);
  if (window > 0) a.layer_sliding_window.assign(a.num_layers, window);
  // MixtralConfig's attribute_map: num_experts is another name of num_local_experts.
  a.moe.num_experts = c.size_or(c.has("num_experts") ? "num_experts" : "num_local_experts", 8);
  a.moe.top_k = c.size_or("num_experts_per_tok", 2);
  a.moe.expert_intermediate = a.intermediate_size;
  a.moe.norm_topk_prob = true;
  a.moe.float32_weights = true;
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.legacy_experts = "block_sparse_moe.experts.";
  n.legacy_router = "block_sparse_moe.gate";
  n.expert_gate = "w1";
  n.expert_up = "w3";
  n.expert_down = "w2";
  w.load_decoder(n);
}

}  // namespace arch_mixtral

extern const ArchSpec kMixtral{"MixtralForCausalLM", "mixtral", 131072, arch_mixtral::parse,
                               arch_mixtral::load};

}  // namespace lmeval::hf

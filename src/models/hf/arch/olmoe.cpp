// OLMoE (OlmoeForCausalLM): Llama's pre-norm layout with RMS norms over the whole q and k
// projections, optional clamping of q, k and v (clip_qkv), and a mixture of num_experts experts
// of intermediate_size in every layer (top-k renormalised only with norm_topk_prob).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_olmoe {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5});
  a.qk_norm = QkNorm::kWhole;
  a.clip_qkv = c.num_or("clip_qkv", 0.0);
  // OlmoeConfig's attribute_map: num_local_experts is another name of num_experts.
  a.moe.num_experts =
      c.size_or(c.has("num_local_experts") ? "num_local_experts" : "num_experts", 64);
  a.moe.top_k = c.size_or("num_experts_per_tok", 8);
  a.moe.expert_intermediate = a.intermediate_size;
  a.moe.norm_topk_prob = c.bool_or("norm_topk_prob", false);
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_olmoe

extern const ArchSpec kOlmoe{"OlmoeForCausalLM", "olmoe", 4096, arch_olmoe::parse,
                             arch_olmoe::load};

}  // namespace lmeval::hf

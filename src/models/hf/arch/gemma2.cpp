// Gemma2 (Gemma2ForCausalLM): Gemma with norms on both branch outputs (sandwich norms),
// alternating sliding-window and global layers, query_pre_attn_scalar and logit soft-capping in
// attention and at the head.
#include <cmath>

#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_gemma_common(const ConfigReader& c, ArchConfig& a);  // gemma.cpp

namespace arch_gemma2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_gemma_common(c, a);
  a.attention_impl = AttnImpl::kEager;  // Gemma2PreTrainedModel._supports_sdpa = False
  const int64_t window = c.int_or("sliding_window", 0);
  if (!parse_layer_types(c, a, window))
    for (int64_t i = 0; i < a.num_layers; i += 2) a.layer_sliding_window[i] = window;
  a.branch_norms = true;
  a.attn_scale =
      1.0 / std::sqrt(c.num_or("query_pre_attn_scalar", static_cast<double>(a.head_dim)));
  a.attn_softcap = c.num_or("attn_logit_softcapping", 0.0);
  a.final_softcap = c.num_or("final_logit_softcapping", 0.0);
}

}  // namespace arch_gemma2

// Gemma2's and Gemma3's names of the four norms of a layer.
void load_gemma_sandwich_weights(WeightLoader& w) {
  DecoderNames n;
  n.post_attn = "post_attention_layernorm";
  n.ln2 = "pre_feedforward_layernorm";
  n.post_mlp = "post_feedforward_layernorm";
  w.load_decoder(n);
}

extern const ArchSpec kGemma2{"Gemma2ForCausalLM", "gemma2", 8192, arch_gemma2::parse,
                              load_gemma_sandwich_weights};

}  // namespace lmeval::hf

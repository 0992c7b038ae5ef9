// OLMo 2 (Olmo2ForCausalLM): no norm before the branches; RMS norms on each branch output
// before its residual add, and on the whole q and k projections (all heads at once).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

// What OLMo 2 and OLMo 3 change in Llama's block.
void parse_olmo2_layout(ArchConfig& a) {
  a.pre_norm = false;
  a.branch_norms = true;
  a.qk_norm = QkNorm::kWhole;
  a.norm_weight_in_float32 = true;  // Olmo2RMSNorm / Olmo3RMSNorm: (w·x).to(dtype)
  a.rope_in_float32 = true;         // Olmo2RotaryEmbedding returns float32 cos/sin
}

void load_olmo2_weights(WeightLoader& w) {
  DecoderNames n;
  n.ln1 = "";
  n.ln2 = "";
  n.post_attn = "post_attention_layernorm";
  n.post_mlp = "post_feedforward_layernorm";
  w.load_decoder(n);
}

namespace arch_olmo2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5});
  parse_olmo2_layout(a);
}

}  // namespace arch_olmo2

extern const ArchSpec kOlmo2{"Olmo2ForCausalLM", "olmo2", 2048, arch_olmo2::parse,
                             load_olmo2_weights};

}  // namespace lmeval::hf

// GLM-4 (Glm4ForCausalLM): Llama with norms on both branch outputs (post_self_attn_layernorm,
// post_mlp_layernorm) besides the pre-norms, a fused gate_up projection, and interleaved rotary
// pairs on the first half of each head (partial_rotary_factor 0.5).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_glm4 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1.5625e-07});
  parse_rope(c, a, 0.5, 10000.0);  // Glm4Config's default partial_rotary_factor
  a.rope_interleaved = true;
  a.branch_norms = true;
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.post_attn = "post_self_attn_layernorm";
  n.post_mlp = "post_mlp_layernorm";
  n.gate_up = "mlp.gate_up_proj";
  w.load_decoder(n);
}

}  // namespace arch_glm4

extern const ArchSpec kGlm4{"Glm4ForCausalLM", "glm4", 131072, arch_glm4::parse, arch_glm4::load};

}  // namespace lmeval::hf

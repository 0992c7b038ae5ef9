// OLMo 2 (Olmo2ForCausalLM): no norm before the branches; RMS norms on each branch output
// before its residual add, and on the whole q and k projections (all heads at once).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_olmo2 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5});
  a.pre_norm = false;
  a.branch_norms = true;
  a.qk_norm = QkNorm::kWhole;
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.ln1 = "";
  n.ln2 = "";
  n.post_attn = "post_attention_layernorm";
  n.post_mlp = "post_feedforward_layernorm";
  w.load_decoder(n);
}

}  // namespace arch_olmo2

extern const ArchSpec kOlmo2{"Olmo2ForCausalLM", "olmo2", arch_olmo2::parse, arch_olmo2::load};

}  // namespace lmeval::hf

// Phi-3 (Phi3ForCausalLM): Llama with fused qkv and gate_up projections, a sliding window on
// every layer and LongRoPE (whose old names "su" and "yarn" parse_rope maps).
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_phi3 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  const int64_t window = c.int_or("sliding_window", 0);
  if (window > 0) a.layer_sliding_window.assign(a.num_layers, window);
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.qkv = "self_attn.qkv_proj";
  n.gate_up = "mlp.gate_up_proj";
  w.load_decoder(n);
}

}  // namespace arch_phi3

extern const ArchSpec kPhi3{"Phi3ForCausalLM", "phi3", 4096, arch_phi3::parse, arch_phi3::load};

}  // namespace lmeval::hf

// Gemma (GemmaForCausalLM): Llama with zero-centred RMS norms (x·(1 + w) in float32), embeddings
// scaled by √hidden, a GELU (tanh) gated MLP and tied embeddings by default.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

// What Gemma, Gemma2 and Gemma3 share on top of the Llama shape.
void parse_gemma_common(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a);
  a.activation = parse_activation(c.str_or("hidden_activation", "gelu_pytorch_tanh"), c.path(),
                                  "$.hidden_activation");
  a.norm_plus_one = true;
  a.embed_scale = true;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
}

namespace arch_gemma {

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_gemma

extern const ArchSpec kGemma{"GemmaForCausalLM", "gemma", 8192, parse_gemma_common,
                             arch_gemma::load};

}  // namespace lmeval::hf

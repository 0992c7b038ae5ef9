// ERNIE 4.5 (Ernie4_5ForCausalLM): Llama with interleaved rotary pairs over the whole head
// (computed in float32), optional biases (use_bias) and tied embeddings by default.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_ernie4_5 {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5, .tie_word_embeddings = true});
  a.rope_interleaved = true;
  a.rope_in_float32 = true;  // apply_rotary_pos_emb: q.float() * cos ..., "full precision"
  (void)c.bool_or("use_bias", false);  // the loader takes the biases the checkpoint has
}

void load(WeightLoader& w) { w.load_decoder({}); }

}  // namespace arch_ernie4_5

extern const ArchSpec kErnie4_5{"Ernie4_5ForCausalLM", "ernie4_5", 131072, arch_ernie4_5::parse,
                                arch_ernie4_5::load};

}  // namespace lmeval::hf

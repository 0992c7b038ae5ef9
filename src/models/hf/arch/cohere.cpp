// Command R (CohereForCausalLM): LayerNorms without bias, one of them feeding attention and a
// SwiGLU MLP in parallel, interleaved rotary pairs, optional LayerNorms over q and k with a
// weight per head (use_qk_norm), logits times logit_scale, tied embeddings.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

// What Cohere and Cohere2 share.
void parse_cohere_common(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.tie_word_embeddings = true});
  a.norm = NormKind::kLayerNorm;
  a.norm_bias = false;
  a.layer_norm_formula = true;  // CohereLayerNorm
  a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
  a.parallel_residual = true;
  a.shared_layer_norm = true;
  a.residual_added_first = true;  // CohereDecoderLayer: residual + attn + mlp
  a.rope_interleaved = true;
  // CohereRotaryEmbedding returns cos/sin in the model dtype; apply_rotary_pos_emb rotates
  // q.float() and k.float() with them and rounds once.
  a.rope_in_float32 = true;
  a.rope_tables_rounded = true;
  a.logit_scale = c.num_or("logit_scale", 0.0625);
  if (c.bool_or("use_qk_norm", false)) a.qk_norm = QkNorm::kPerHeadWeights;
}

void load_cohere_weights(WeightLoader& w) {
  DecoderNames n;
  n.ln2 = "";
  w.load_decoder(n);
}

extern const ArchSpec kCohere{"CohereForCausalLM", "cohere", 8192, parse_cohere_common,
                              load_cohere_weights};

}  // namespace lmeval::hf

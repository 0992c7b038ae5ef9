// GPT-J (GPTJForCausalLM): one LayerNorm feeding attention and a GELU MLP in parallel, rotary
// embedding on the first rotary_dim dimensions of each head with interleaved pairs
// (rotate_every_two), no attention biases, an LM head with a bias.
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_gptj {

void parse(const ConfigReader& c, ArchConfig& a) {
  a.hidden_size = c.size_("n_embd");
  a.num_layers = c.size_("n_layer");
  a.num_heads = c.size_("n_head");
  a.intermediate_size = c.size_or("n_inner", 4 * a.hidden_size);
  a.max_position_embeddings = c.opt_size("n_positions");
  a.norm = NormKind::kLayerNorm;
  a.attention_impl = AttnImpl::kEagerFloat32Scores;  // GPTJAttention has no SDPA
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
  a.activation = parse_activation(c.str_or("activation_function", "gelu_new"), c.path(),
                                  "$.activation_function");
  a.gated_mlp = false;
  a.parallel_residual = true;
  a.shared_layer_norm = true;
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  finish_heads(c, a);
  // GPTJAttention's create_sinusoidal_positions: base 10000 over rotary_dim (None: the head).
  a.rope = RopeType::kDefault;
  a.rope_theta = 10000.0;
  a.rotary_dim = c.has("rotary_dim") ? c.size_("rotary_dim") : a.head_dim;
  a.rope_interleaved = true;
  a.layer_sliding_window.assign(a.num_layers, 0);
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.prefix = "transformer.";
  n.embed = "wte";
  n.layers = "h.";
  n.ln1 = "ln_1";
  n.ln2 = "";
  n.q = "attn.q_proj";
  n.k = "attn.k_proj";
  n.v = "attn.v_proj";
  n.o = "attn.out_proj";
  n.fc1 = "mlp.fc_in";
  n.fc2 = "mlp.fc_out";
  n.final_norm = "ln_f";
  n.head_bias = true;
  w.load_decoder(n);
}

}  // namespace arch_gptj

extern const ArchSpec kGptJ{"GPTJForCausalLM", "gptj", 2048, arch_gptj::parse, arch_gptj::load};

}  // namespace lmeval::hf

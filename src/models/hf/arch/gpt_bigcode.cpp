// GPTBigCode / StarCoder 1, SantaCoder (GPTBigCodeForCausalLM): GPT-2 with nn.Linear weights
// and multi-query attention (one kv head) by default; c_attn rows [q; k; v] (multi_query) or
// per head [q, k, v].
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {

void parse_gpt2_shape(const ConfigReader& c, ArchConfig& a,
                      const char* default_activation);  // gpt2.cpp

namespace arch_gpt_bigcode {

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_gpt2_shape(c, a, "gelu_pytorch_tanh");
  a.num_kv_heads = c.bool_or("multi_query", true) ? 1 : a.num_heads;
  finish_heads(c, a);
}

void load(WeightLoader& w) {
  const ArchConfig& cfg = w.cfg;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, KV = cfg.num_kv_heads, hd = cfg.head_dim;
  const int64_t I = cfg.intermediate_size, rows = (H + 2 * KV) * hd;
  const std::string p = "transformer.";
  w.m.embed = w.get(p, "wte.weight", {cfg.vocab_size, Hd});
  w.m.pos_embed = w.get(p, "wpe.weight", {cfg.learned_positions, Hd});
  w.m.layers.resize(cfg.num_layers);
  // Multi-head c_attn rows are per head [q, k, v] (GPTBigCodeAttention's view + split).
  auto regroup = [&](const Tensor& t) {
    return KV == 1 ? t : WeightLoader::per_head_qkv(t, H, hd);
  };
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = w.m.layers[i];
    const std::string l = "h." + std::to_string(i) + ".";
    L.ln1_w = w.get(p, l + "ln_1.weight", {Hd});
    L.ln1_b = w.get(p, l + "ln_1.bias", {Hd});
    L.ln2_w = w.get(p, l + "ln_2.weight", {Hd});
    L.ln2_b = w.get(p, l + "ln_2.bias", {Hd});
    L.qkv_w = regroup(w.get(p, l + "attn.c_attn.weight", {rows, Hd}));
    L.qkv_b = regroup(w.get(p, l + "attn.c_attn.bias", {rows}, false));
    L.o_w = w.get(p, l + "attn.c_proj.weight", {Hd, Hd});
    L.o_b = w.get(p, l + "attn.c_proj.bias", {Hd}, false);
    L.up_w = w.get(p, l + "mlp.c_fc.weight", {I, Hd});
    L.up_b = w.get(p, l + "mlp.c_fc.bias", {I}, false);
    L.down_w = w.get(p, l + "mlp.c_proj.weight", {Hd, I});
    L.down_b = w.get(p, l + "mlp.c_proj.bias", {Hd}, false);
  }
  w.m.final_w = w.get(p, "ln_f.weight", {Hd});
  w.m.final_b = w.get(p, "ln_f.bias", {Hd});
  if (!cfg.tie_word_embeddings) w.m.head_w = w.get_exact("lm_head.weight", {cfg.vocab_size, Hd});
}

}  // namespace arch_gpt_bigcode

extern const ArchSpec kGptBigCode{"GPTBigCodeForCausalLM", "gpt_bigcode", 1024,
                                  arch_gpt_bigcode::parse, arch_gpt_bigcode::load};

}  // namespace lmeval::hf

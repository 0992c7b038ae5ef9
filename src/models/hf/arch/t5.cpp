// T5 (T5ForConditionalGeneration): v1.0 (ReLU feed-forward, the decoder output scaled by
// d_model**-0.5 before the LM head) and v1.1 / Flan-T5 (gated-gelu, an LM head of its own, no
// scaling), as transformers' modeling_t5.py and T5Config compute them.
#include "lmeval/core/error.hpp"
#include "models/hf/arch/encoder_decoder_config.hpp"
#include "models/hf/encoder_decoder_impl.hpp"

namespace lmeval::hf {
namespace arch_t5 {

// ACT2FN's names for T5's dense_act_fn.
Activation activation(const ConfigReader& c, const std::string& name, const std::string& key) {
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGeluExact;
  if (name == "gelu_new") return Activation::kGeluNew;
  if (name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "silu" || name == "swish") return Activation::kSilu;
  throw UserError("activation '" + name + "' is not supported", {c.path(), 0, 0, "$." + key},
                  "relu, gelu, gelu_new or silu (feed_forward_proj ACT or gated-ACT)");
}

void parse(const ConfigReader& c, EncoderDecoderConfig& a) {
  // T5Config's defaults (t5-small's shape).
  a.d_model = c.size_or("d_model", 512);
  a.d_kv = c.size_or("d_kv", 64);
  a.d_ff = c.size_or("d_ff", 2048);
  a.num_heads = c.size_or("num_heads", 8);
  a.encoder_layers = c.size_or("num_layers", 6);
  a.decoder_layers = c.size_or("num_decoder_layers", a.encoder_layers);
  a.relative_buckets = c.size_or("relative_attention_num_buckets", 32);
  a.relative_max_distance = c.size_or("relative_attention_max_distance", 128);
  a.norm_eps = c.num_or("layer_norm_epsilon", 1e-6);
  // T5Config.__post_init__: "ACT" or "gated-ACT", gated-gelu meaning gelu_new; dense_act_fn and
  // is_gated_act written in config.json (transformers 5 saves them) are set after and win.
  const std::string proj = c.str_or("feed_forward_proj", "relu");
  const auto dash = proj.find('-');
  const std::string first = proj.substr(0, dash);
  const std::string last = dash == std::string::npos ? proj : proj.substr(proj.rfind('-') + 1);
  if ((dash != std::string::npos && first != "gated") ||
      (dash != std::string::npos && proj.find('-', dash + 1) != std::string::npos))
    throw UserError("feed_forward_proj '" + proj + "' is not valid",
                    {c.path(), 0, 0, "$.feed_forward_proj"},
                    "ACT or gated-ACT, e.g. relu or gated-gelu");
  a.gated_mlp = c.bool_or("is_gated_act", first == "gated" && dash != std::string::npos);
  const std::string act =
      c.str_or("dense_act_fn", proj == "gated-gelu" ? std::string("gelu_new") : last);
  a.activation = activation(c, act, c.has("dense_act_fn") ? "dense_act_fn" : "feed_forward_proj");
  // T5Config: the outputs are scaled unless tie_word_embeddings is false (v1.1 and Flan-T5
  // configs say so); a saved scale_decoder_outputs is set after and wins.
  a.scale_decoder_outputs =
      c.bool_or("scale_decoder_outputs", c.bool_or("tie_word_embeddings", true));
  // T5's _shift_right and generate need it (transformers raises without one).
  a.decoder_start_token_id = c.int_("decoder_start_token_id");
}

void load_attention(EncoderDecoderWeights& w, const std::string& p, encdec::Attention& at) {
  const int64_t D = w.cfg.d_model, inner = w.cfg.num_heads * w.cfg.d_kv;
  at.q = w.get({p + "q.weight"}, {inner, D});
  at.k = w.get({p + "k.weight"}, {inner, D});
  at.v = w.get({p + "v.weight"}, {inner, D});
  at.o = w.get({p + "o.weight"}, {D, inner});
}

void load_stack(EncoderDecoderWeights& w, const std::string& name, int64_t layers, bool decoder,
                encdec::Stack& s) {
  const EncoderDecoderConfig& c = w.cfg;
  const int64_t D = c.d_model;
  s.blocks.resize(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) {
    encdec::Block& b = s.blocks[static_cast<size_t>(i)];
    const std::string l = name + ".block." + std::to_string(i) + ".layer.";
    b.self_norm = w.get({l + "0.layer_norm.weight"}, {D});
    load_attention(w, l + "0.SelfAttention.", b.self_attn);
    // Only the first block has the table (has_relative_attention_bias=bool(i == 0)).
    if (i == 0)
      s.relative_bias = w.get({l + "0.SelfAttention.relative_attention_bias.weight"},
                              {c.relative_buckets, c.num_heads});
    const std::string ff = l + (decoder ? "2." : "1.");
    if (decoder) {
      b.cross_norm = w.get({l + "1.layer_norm.weight"}, {D});
      load_attention(w, l + "1.EncDecAttention.", b.cross_attn);
    }
    b.ff_norm = w.get({ff + "layer_norm.weight"}, {D});
    if (c.gated_mlp) {
      b.wi_gate = w.get({ff + "DenseReluDense.wi_0.weight"}, {c.d_ff, D});
      b.wi = w.get({ff + "DenseReluDense.wi_1.weight"}, {c.d_ff, D});
    } else {
      b.wi = w.get({ff + "DenseReluDense.wi.weight"}, {c.d_ff, D});
    }
    b.wo = w.get({ff + "DenseReluDense.wo.weight"}, {D, c.d_ff});
  }
  s.final_norm = w.get({name + ".final_layer_norm.weight"}, {D});
}

void load(EncoderDecoderWeights& w) {
  const EncoderDecoderConfig& c = w.cfg;
  w.m.shared =
      w.get({"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"},
            {c.vocab_size, c.d_model});
  load_stack(w, "encoder", c.encoder_layers, false, w.m.encoder);
  load_stack(w, "decoder", c.decoder_layers, true, w.m.decoder);
  // transformers 5 ties lm_head to shared unless the checkpoint holds an lm_head.weight of other
  // values (v1.1 / Flan-T5 checkpoints): then that one is kept.
  w.m.lm_head = w.get({"lm_head.weight"}, {c.vocab_size, c.d_model}, false);
  if (!w.m.lm_head.defined()) w.m.lm_head = w.m.shared;
}

}  // namespace arch_t5

extern const EncoderDecoderSpec kT5{"T5ForConditionalGeneration", "t5", arch_t5::parse,
                                    arch_t5::load};

}  // namespace lmeval::hf

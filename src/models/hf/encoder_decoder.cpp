// The encoder and decoder stacks of EncoderDecoder (ATen, any device), as transformers'
// modeling_t5.py computes them: T5LayerNorm (RMS without mean subtraction, the variance in
// float32), attention without 1/sqrt(d) scaling, a bucketed relative position bias computed by
// each stack's first block and shared by the others (bidirectional in the encoder, causal in the
// decoder), cross-attention without position bias, dense or gated feed-forward.
#include "models/hf/encoder_decoder.hpp"

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "lmeval/core/error.hpp"
#include "models/hf/encoder_decoder_impl.hpp"
#include "models/hf/json_file.hpp"
#include "models/hf/native_weights.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

using at::Tensor;
using Impl = EncoderDecoder::Impl;

namespace encdec {

std::optional<at::ScalarType> encdec_dtype(const std::string& name) {
  if (name == "float32" || name == "float") return at::kFloat;
  if (name == "float16" || name == "half") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  if (name == "float64" || name == "double") return at::kDouble;
  return std::nullopt;
}

// The additive mask value of transformers' masks: the dtype's most negative finite number.
double mask_min(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
      return -65504.0;
    case at::kBFloat16:
      return -3.3895313892515355e38;  // torch.finfo(torch.bfloat16).min
    case at::kDouble:
      return std::numeric_limits<double>::lowest();
    default:
      return static_cast<double>(std::numeric_limits<float>::lowest());
  }
}

// nn.Linear without bias: in float16/bfloat16 on the CPU in torch 2.15's summation order
// (half_gemm.hpp), one rounding per output; a float32 input of a float16 model (wo, kept in
// float32) as MKL's sgemm sums it (math_matmul).
Tensor matmul_t(const Impl& m, const Tensor& x, const Tensor& w) {
  if (reduced_on_cpu(x)) return half_gemm::linear(x, w, {});
  if (x.is_cpu() && w.scalar_type() == at::kFloat && x.scalar_type() == at::kFloat &&
      (m.dtype == at::kHalf || m.dtype == at::kBFloat16)) {
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = w.size(0);
    return math_matmul(x.reshape({-1, x.size(-1)}), w.t(), true, 0, 0, 0, false).view(shape);
  }
  return at::matmul(x, w.t());
}

// T5LayerNorm.
Tensor t5_norm(const Impl& m, const Tensor& x, const Tensor& w) {
  Tensor var = x.to(at::kFloat).pow(2).mean(-1, /*keepdim=*/true);
  Tensor y = x * at::rsqrt(var + m.cfg.norm_eps);
  if (w.scalar_type() == at::kHalf || w.scalar_type() == at::kBFloat16) y = y.to(w.scalar_type());
  return w * y;
}

// T5Attention._relative_position_bucket, op for op (float32 logarithms, truncation to long).
Tensor relative_bucket(Tensor rel, bool bidirectional, int64_t buckets, int64_t max_distance) {
  Tensor out = at::zeros_like(rel);
  if (bidirectional) {
    buckets /= 2;
    out = out + (rel > 0).to(at::kLong) * buckets;
    rel = at::abs(rel);
  } else {
    rel = -at::min(rel, at::zeros_like(rel));
  }
  const int64_t max_exact = buckets / 2;
  Tensor is_small = rel < max_exact;
  Tensor large =
      max_exact + (at::log(rel.to(at::kFloat) / max_exact) /
                   std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)) *
                   static_cast<double>(buckets - max_exact))
                      .to(at::kLong);
  large = at::min(large, at::full_like(large, buckets - 1));
  return out + at::where(is_small, rel, large);
}

// T5Attention.compute_bias: [1, heads, q_len, k_len] for queries at q_offset + [0, q_len).
Tensor position_bias(const Impl& m, const Tensor& table, int64_t q_len, int64_t k_len,
                     int64_t q_offset, bool bidirectional) {
  Tensor ctx = at::arange(q_len, m.lopt()).unsqueeze(1) + q_offset;
  Tensor mem = at::arange(k_len, m.lopt()).unsqueeze(0);
  Tensor b = relative_bucket(mem - ctx, bidirectional, m.cfg.relative_buckets,
                             m.cfg.relative_max_distance);
  return at::embedding(table, b).permute({2, 0, 1}).unsqueeze(0);
}

Tensor split_heads(const Impl& m, const Tensor& x) {
  return x.view({x.size(0), x.size(1), m.cfg.num_heads, m.cfg.d_kv}).transpose(1, 2);
}

// Scores q·k (no scaling) + position bias + additive mask, softmax, the heads merged and
// projected by o.
Tensor attend(const Impl& m, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
              const Tensor& mask, const Tensor& o) {
  if (reduced_on_cpu(q)) {
    // transformers 5.23 runs T5 through SDPA: the position bias where a key is allowed (the
    // additive masks' zeros), the dtype's minimum elsewhere (create_position_bias_mask), scale
    // 1, which on the CPU is torch's flash kernel with a float mask. A call of one query (a
    // decoding step) is one query over its keys in the reference too.
    const int64_t B = q.size(0), T = q.size(2);
    const Tensor allow = mask.defined() ? mask.eq(0) : Tensor();
    const std::vector<FlashRow> rows(T == 1 ? static_cast<size_t>(B) : 0, FlashRow::kDecode);
    const Tensor a =
        flash_attention_reduced(q, k, v, allow, bias, 1.0, rows, {}, reference_threads());
    return matmul_t(m, a.transpose(1, 2).reshape({B, T, m.cfg.num_heads * m.cfg.d_kv}), o);
  }
  Tensor s = at::matmul(q, k.transpose(2, 3)) + bias;
  if (mask.defined()) s = s + mask;
  Tensor p = at::softmax(s, -1);
  Tensor out = at::matmul(p, v).transpose(1, 2);
  return matmul_t(m, out.reshape({q.size(0), q.size(2), m.cfg.num_heads * m.cfg.d_kv}), o);
}

// T5Block's clamp of float16 hidden states after each sub-layer (to the largest finite value,
// less 1000 once an infinity appeared).
Tensor clamp_fp16(const Tensor& h) {
  if (h.scalar_type() != at::kHalf) return h;
  const double mx = 65504.0;
  const Tensor f = h.to(at::kFloat);  // exact; libtorch 1.13 has no CPU clamp for float16
  const double c = at::isinf(f).any().item<bool>() ? mx - 1000.0 : mx;
  return at::clamp(f, -c, c).to(at::kHalf);
}

Tensor feed_forward(const Impl& m, const encdec::Block& b, const Tensor& x) {
  Tensor h = m.cfg.gated_mlp
                 ? activate(matmul_t(m, x, b.wi_gate), m.cfg.activation) * matmul_t(m, x, b.wi)
                 : activate(matmul_t(m, x, b.wi), m.cfg.activation);
  if (h.scalar_type() != b.wo.scalar_type()) h = h.to(b.wo.scalar_type());
  return matmul_t(m, h, b.wo);
}

// The encoder over ids [B, S] with mask [B, S] (1 = real token): its final normed output and the
// additive key mask [B, 1, 1, S] the decoder's cross-attention uses.
std::pair<Tensor, Tensor> encode(const Impl& m, const Tensor& ids, const Tensor& mask) {
  const int64_t S = ids.size(1);
  Tensor add = (1 - mask.to(m.dtype)).mul(mask_min(m.dtype)).view({ids.size(0), 1, 1, S});
  Tensor bias = position_bias(m, m.encoder.relative_bias, S, S, 0, true);
  Tensor h = at::embedding(m.shared, ids);
  for (const encdec::Block& b : m.encoder.blocks) {
    Tensor x = t5_norm(m, h, b.self_norm);
    h = clamp_fp16(h + attend(m, split_heads(m, matmul_t(m, x, b.self_attn.q)),
                              split_heads(m, matmul_t(m, x, b.self_attn.k)),
                              split_heads(m, matmul_t(m, x, b.self_attn.v)), bias, add,
                              b.self_attn.o));
    h = clamp_fp16(h + feed_forward(m, b, t5_norm(m, h, b.ff_norm)));
  }
  return {t5_norm(m, h, m.encoder.final_norm), add};
}

// Cross-attention keys and values of each decoder block, computed once from the encoder output.
struct CrossKv {
  std::vector<Tensor> k, v;
};

CrossKv cross_kv(const Impl& m, const Tensor& enc) {
  CrossKv c;
  for (const encdec::Block& b : m.decoder.blocks) {
    c.k.push_back(split_heads(m, matmul_t(m, enc, b.cross_attn.k)));
    c.v.push_back(split_heads(m, matmul_t(m, enc, b.cross_attn.v)));
  }
  return c;
}

// The decoder over ids [B, T] at positions offset + [0, T), its self-attention keys and values
// appended to `self_k`/`self_v` (one per block; undefined = empty): the LM head's input.
Tensor decode(const Impl& m, const Tensor& ids, int64_t offset, const CrossKv& cross,
              const Tensor& enc_mask, std::vector<Tensor>& self_k, std::vector<Tensor>& self_v) {
  const int64_t T = ids.size(1), K = offset + T;
  Tensor bias = position_bias(m, m.decoder.relative_bias, T, K, offset, false);
  Tensor causal;
  if (T > 1)
    causal = at::triu(at::full({T, K}, mask_min(m.dtype), m.fopt()), offset + 1).view({1, 1, T, K});
  // Cross-attention has no position bias (T5's zeros), only the encoder's mask.
  Tensor cross_bias = at::zeros({1, m.cfg.num_heads, T, enc_mask.size(3)}, m.fopt());
  Tensor h = at::embedding(m.shared, ids);
  self_k.resize(m.decoder.blocks.size());
  self_v.resize(m.decoder.blocks.size());
  for (size_t i = 0; i < m.decoder.blocks.size(); ++i) {
    const encdec::Block& b = m.decoder.blocks[i];
    Tensor x = t5_norm(m, h, b.self_norm);
    Tensor k = split_heads(m, matmul_t(m, x, b.self_attn.k));
    Tensor v = split_heads(m, matmul_t(m, x, b.self_attn.v));
    self_k[i] = self_k[i].defined() ? at::cat({self_k[i], k}, 2) : k;
    self_v[i] = self_v[i].defined() ? at::cat({self_v[i], v}, 2) : v;
    h = clamp_fp16(h + attend(m, split_heads(m, matmul_t(m, x, b.self_attn.q)), self_k[i],
                              self_v[i], bias, causal, b.self_attn.o));
    x = t5_norm(m, h, b.cross_norm);
    h = clamp_fp16(h + attend(m, split_heads(m, matmul_t(m, x, b.cross_attn.q)), cross.k[i],
                              cross.v[i], cross_bias, enc_mask, b.cross_attn.o));
    h = clamp_fp16(h + feed_forward(m, b, t5_norm(m, h, b.ff_norm)));
  }
  h = t5_norm(m, h, m.decoder.final_norm);
  if (m.cfg.scale_decoder_outputs)
    h = scaled(h, std::pow(static_cast<double>(m.cfg.d_model), -0.5));
  return h;
}

Tensor logits_of(const Impl& m, const Tensor& h) { return matmul_t(m, h, m.lm_head); }

void check_ids(const Impl& m, const std::vector<Token>& ids) {
  for (Token t : ids)
    if (t < 0 || t >= m.cfg.vocab_size)
      throw UserError("token id " + std::to_string(t) + " is outside the model's vocabulary",
                      {"", 0, 0, "tokenizer"},
                      "ids below vocab_size " + std::to_string(m.cfg.vocab_size) +
                          " (a tokenizer of this model)");
}

Tensor padded(const Impl& m, const std::vector<std::vector<Token>>& rows, int64_t width, bool left,
              Tensor* mask) {
  std::vector<int64_t> ids(rows.size() * static_cast<size_t>(width), 0), mk(ids.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const size_t off = left ? static_cast<size_t>(width) - rows[r].size() : 0;
    for (size_t i = 0; i < rows[r].size(); ++i) {
      ids[r * static_cast<size_t>(width) + off + i] = rows[r][i];
      mk[r * static_cast<size_t>(width) + off + i] = 1;
    }
  }
  const auto B = static_cast<int64_t>(rows.size());
  if (mask) *mask = at::tensor(mk, at::kLong).view({B, width}).to(m.device);
  return at::tensor(ids, at::kLong).view({B, width}).to(m.device);
}

}  // namespace encdec

at::Tensor EncoderDecoderWeights::get(const std::vector<std::string>& names,
                                      const std::vector<int64_t>& shape, bool required) {
  const TensorView* view = find_weight(w_, names, shape, required, cfg.architecture);
  if (!view) return {};
  Tensor src = tensor_over(*view);
  // T5PreTrainedModel._keep_in_fp32_modules = ["wo"]: kept in float32 when loaded in float16.
  const bool keep_fp32 = m.dtype == at::kHalf && view->name.size() > 9 &&
                         view->name.compare(view->name.size() - 9, 9, "wo.weight") == 0;
  Tensor out = src.to(keep_fp32 ? m.fopt().dtype(at::kFloat) : m.fopt(), false, true);
  w_.release(*view);
  m.n_params += out.numel();
  return out;
}

EncoderDecoder::EncoderDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EncoderDecoder::~EncoderDecoder() = default;

std::unique_ptr<EncoderDecoder> EncoderDecoder::load(const std::filesystem::path& dir,
                                                     const LoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  const std::filesystem::path cfg_path = dir / "config.json";
  if (!std::filesystem::exists(cfg_path))
    throw UserError("model folder has no config.json", {cfg_path.string(), 0, 0, ""},
                    "a Hugging Face model folder with config.json");
  impl->cfg =
      parse_encoder_decoder_config(load_json_file(cfg_path, "config.json"), cfg_path.string());
  impl->device = native_device(options.device);
  if (options.dtype.empty() || options.dtype == "auto") {
    auto t = encdec::encdec_dtype(impl->cfg.torch_dtype);
    impl->dtype = t ? *t : at::kFloat;  // transformers' _get_dtype: the config's torch_dtype
  } else {
    auto t = encdec::encdec_dtype(options.dtype);
    if (!t)
      throw UserError("unknown dtype '" + options.dtype + "'", {"", 0, 0, "dtype"},
                      "auto, float32, float16 or bfloat16");
    impl->dtype = *t;
  }
  impl->softmax_dtype = impl->dtype;
  if (!options.softmax_dtype.empty() && options.softmax_dtype != "auto") {
    auto t = encdec::encdec_dtype(options.softmax_dtype);
    if (!t)
      throw UserError("unknown softmax_dtype '" + options.softmax_dtype + "'",
                      {"", 0, 0, "softmax_dtype"}, "float32, float16, bfloat16 or float64");
    impl->softmax_dtype = *t;
  }
  if (options.threads > 0) at::set_num_threads(options.threads);
  auto archive = WeightArchive::open(dir, options.weights);
  EncoderDecoderWeights loader(*impl, *archive);
  c10::InferenceMode guard;
  guarded([&] {
    for (const EncoderDecoderSpec* s : encoder_decoder_registry())
      if (impl->cfg.model_type.empty() ? impl->cfg.architecture == s->architecture
                                       : impl->cfg.model_type == s->model_type)
        s->load(loader);
    return 0;
  });
  return std::unique_ptr<EncoderDecoder>(new EncoderDecoder(std::move(impl)));
}

void EncoderDecoder::tie_word_embeddings() {
  if (impl_->lm_head.is_same(impl_->shared)) return;
  impl_->n_params -= impl_->lm_head.numel();
  impl_->lm_head = impl_->shared;
}

const EncoderDecoderConfig& EncoderDecoder::config() const { return impl_->cfg; }
int64_t EncoderDecoder::num_parameters() const { return impl_->n_params; }
bool EncoderDecoder::on_cuda() const { return impl_->device.is_cuda(); }
std::string EncoderDecoder::dtype_name() const { return torch_dtype_name(impl_->dtype); }

std::vector<SpanScore> EncoderDecoder::score(const std::vector<Seq2SeqRow>& rows) {
  const Impl& m = *impl_;
  if (rows.empty()) return {};
  return guarded([&] {
    c10::InferenceMode guard;
    size_t S = 1, T = 1;
    std::vector<std::vector<Token>> enc, dec;
    // Rows with the same encoder input (the choices of a multiple-choice question) share one
    // encoder pass; each row's cross-attention reads its context's output.
    std::map<std::vector<Token>, int64_t> context_of;
    std::vector<int64_t> row_context;
    for (const auto& r : rows) {
      encdec::check_ids(m, r.encoder);
      encdec::check_ids(m, r.targets);
      S = std::max(S, r.encoder.size());
      T = std::max(T, r.targets.size());
      auto [it, fresh] = context_of.emplace(r.encoder, static_cast<int64_t>(enc.size()));
      if (fresh) enc.push_back(r.encoder);
      row_context.push_back(it->second);
      // _shift_right(labels): the start token, then the labels but the last.
      std::vector<Token> d{static_cast<Token>(m.cfg.decoder_start_token_id)};
      if (!r.targets.empty()) d.insert(d.end(), r.targets.begin(), r.targets.end() - 1);
      dec.push_back(std::move(d));
    }
    Tensor enc_mask;
    Tensor enc_ids = encdec::padded(m, enc, static_cast<int64_t>(S), false, &enc_mask);
    Tensor dec_ids = encdec::padded(m, dec, static_cast<int64_t>(T), false, nullptr);
    auto [enc_out, add] = encdec::encode(m, enc_ids, enc_mask);
    if (enc.size() < rows.size()) {
      const Tensor pick = at::tensor(row_context, at::kLong).to(m.device);
      enc_out = enc_out.index_select(0, pick);
      add = add.index_select(0, pick);
    }
    std::vector<Tensor> sk, sv;
    Tensor h = encdec::decode(m, dec_ids, 0, encdec::cross_kv(m, enc_out), add, sk, sv);
    std::vector<SpanScore> out;
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto n = static_cast<int64_t>(rows[r].targets.size());
      if (n == 0) {
        out.push_back({0.0, true});
        continue;
      }
      const Tensor logits = encdec::logits_of(m, h[static_cast<int64_t>(r)].slice(0, 0, n));
      Tensor lp = logits.scalar_type() == m.softmax_dtype
                      ? log_softmax_rounded(logits)  // HFLM: in the logits' dtype
                      : at::log_softmax(logits, -1, m.softmax_dtype);
      Tensor tgt = at::tensor(std::vector<int64_t>(rows[r].targets.begin(), rows[r].targets.end()),
                              at::kLong)
                       .to(m.device);
      Tensor greedy = lp.argmax(-1).cpu();
      SpanScore s;
      // float(logits.sum()): summed in the log-softmax's dtype, as the reference's torch sum.
      s.logprob = lp.gather(1, tgt.unsqueeze(1)).sum().item<double>();
      s.is_greedy = at::equal(greedy, tgt.cpu());
      out.push_back(s);
    }
    return out;
  });
}

std::vector<float> EncoderDecoder::full_logprobs(
    const std::vector<std::vector<Token>>& encoder_ids,
    const std::vector<std::vector<int64_t>>& encoder_mask,
    const std::vector<std::vector<Token>>& decoder_ids) {
  const Impl& m = *impl_;
  return guarded([&] {
    c10::InferenceMode guard;
    const auto B = static_cast<int64_t>(encoder_ids.size());
    const auto S = static_cast<int64_t>(encoder_ids[0].size());
    const auto T = static_cast<int64_t>(decoder_ids[0].size());
    std::vector<int64_t> e, mk, d;
    for (int64_t b = 0; b < B; ++b) {
      e.insert(e.end(), encoder_ids[b].begin(), encoder_ids[b].end());
      mk.insert(mk.end(), encoder_mask[b].begin(), encoder_mask[b].end());
      d.insert(d.end(), decoder_ids[b].begin(), decoder_ids[b].end());
    }
    Tensor enc_ids = at::tensor(e, at::kLong).view({B, S}).to(m.device);
    Tensor mask = at::tensor(mk, at::kLong).view({B, S}).to(m.device);
    Tensor dec = at::tensor(d, at::kLong).view({B, T}).to(m.device);
    auto [enc_out, add] = encdec::encode(m, enc_ids, mask);
    std::vector<Tensor> sk, sv;
    Tensor h = encdec::decode(m, dec, 0, encdec::cross_kv(m, enc_out), add, sk, sv);
    Tensor lp = at::log_softmax(encdec::logits_of(m, h).to(at::kFloat), -1).contiguous().cpu();
    return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
  });
}

std::vector<std::vector<Token>> EncoderDecoder::generate(
    const std::vector<std::vector<Token>>& prompts, const SamplingOptions& so, const StopFn& stop) {
  const Impl& m = *impl_;
  const size_t B = prompts.size();
  std::vector<std::vector<Token>> out(B);
  if (B == 0 || so.max_new_tokens <= 0) return out;
  return guarded([&] {
    c10::InferenceMode guard;
    size_t S = 1;
    for (const auto& p : prompts) {
      encdec::check_ids(m, p);
      S = std::max(S, p.size());
    }
    Tensor enc_mask;
    Tensor enc_ids = encdec::padded(m, prompts, static_cast<int64_t>(S), true, &enc_mask);
    auto [enc_out, add] = encdec::encode(m, enc_ids, enc_mask);
    const encdec::CrossKv cross = encdec::cross_kv(m, enc_out);
    std::vector<Tensor> sk, sv;
    std::vector<bool> done(B, false);
    std::mt19937_64 rng(so.seed.value_or(1234));
    std::vector<int64_t> next(B, m.cfg.decoder_start_token_id);
    for (int64_t step = 0; step < so.max_new_tokens; ++step) {
      Tensor ids = at::tensor(next, at::kLong).view({static_cast<int64_t>(B), 1}).to(m.device);
      Tensor h = encdec::decode(m, ids, step, cross, add, sk, sv);
      Tensor logits = encdec::logits_of(m, h.select(1, 0)).to(at::kFloat);
      Tensor picked;
      if (so.do_sample) {
        Tensor lg = logits / so.temperature;
        if (so.top_k > 0) {
          auto kth = std::get<0>(lg.topk(std::min<int64_t>(so.top_k, lg.size(-1)), -1))
                         .select(-1, -1)
                         .unsqueeze(-1);
          lg = lg.masked_fill(lg < kth, -std::numeric_limits<float>::infinity());
        }
        Tensor probs = at::softmax(lg, -1).cpu();
        std::vector<int64_t> draws(B);
        for (size_t r = 0; r < B; ++r) {
          const float* p = probs[static_cast<int64_t>(r)].data_ptr<float>();
          std::discrete_distribution<int64_t> dist(p, p + probs.size(1));
          draws[r] = dist(rng);
        }
        picked = at::tensor(draws, at::kLong);
      } else {
        picked = logits.argmax(-1).cpu();
      }
      const int64_t* pk = picked.data_ptr<int64_t>();
      bool all_done = true;
      for (size_t r = 0; r < B; ++r) {
        if (done[r]) {
          next[r] = so.pad_id;  // finished rows are fed padding, as generate does
          continue;
        }
        const auto t = static_cast<Token>(pk[r]);
        out[r].push_back(t);
        next[r] = t;
        if (std::find(so.eos_ids.begin(), so.eos_ids.end(), t) != so.eos_ids.end() ||
            (stop && stop(r, out[r])))
          done[r] = true;
        all_done = all_done && done[r];
      }
      if (all_done) break;
    }
    return out;
  });
}

}  // namespace lmeval::hf

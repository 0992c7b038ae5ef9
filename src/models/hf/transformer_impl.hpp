// Transformer::Impl: the weights and the ATen forward pass of the hf backend, shared by
// transformer.cpp (loading, generation) and prefix_forward.cpp (batch-invariant scoring).
// Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/core/error.hpp"
#include "models/hf/activation.hpp"
#include "models/hf/alibi.hpp"
#include "models/hf/block.hpp"
#include "models/hf/cpu_float32.hpp"
#include "models/hf/debug_dump.hpp"
#include "models/hf/decode_attention.hpp"
#include "models/hf/few_rows_linear.hpp"
#include "models/hf/half_layer_norm.hpp"
#include "models/hf/prefill_attention.hpp"
#include "models/hf/reduced_attention.hpp"
#include "models/hf/reduced_precision.hpp"
#include "models/hf/rope.hpp"
#include "models/hf/transformer.hpp"

namespace lmeval::hf {

using at::Tensor;

// Device errors become OutOfMemory (so callers can shrink the batch) or RuntimeError.
template <typename F>
inline auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const c10::OutOfMemoryError& e) {
    throw OutOfMemory(e.what());
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("out of host memory");
  } catch (const c10::Error& e) {
    std::string msg = e.what();
    // CUDA: "CUDA out of memory"; CPU: "DefaultCPUAllocator: can't allocate memory".
    if (msg.find("out of memory") != std::string::npos ||
        msg.find("can't allocate memory") != std::string::npos)
      throw OutOfMemory(msg.substr(0, msg.find('\n')));
    throw RuntimeError("libtorch error: " + msg.substr(0, msg.find('\n')));
  }
}

namespace detail {

struct Layer {
  Tensor ln1_w, ln1_b, ln2_w, ln2_b;  // norms before attention and before the MLP
  Tensor post_attn_w, post_mlp_w;     // norms on the branch outputs (ArchConfig::branch_norms)
  Tensor qkv_w, qkv_b;                // rows [Q; K; V]
  Tensor o_w, o_b;
  Tensor q_norm_w, q_norm_b, k_norm_w, k_norm_b;  // ArchConfig::qk_norm
  Tensor up_w, up_b;                              // gated: rows [gate; up]; plain: fc1
  Tensor down_w, down_b;                          // (MoE layers: the shared expert's)
  // Mixture of experts (ArchConfig::moe): router [E, hidden], experts [E, 2I, hidden] (rows
  // [gate; up]) and [E, hidden, I], the shared expert's gate [1, hidden].
  Tensor router_w, experts_up, experts_down, shared_gate_w;
  Tensor router_bias;  // DeepSeek-V3's e_score_correction_bias [E] (the choice only)
  // Multi-head latent attention (ArchConfig::mla): q_proj (in qkv_w) or q_a_proj, its norm and
  // q_b_proj; kv_a_proj_with_mqa (rows [latent; rope key]), kv_a_layernorm, kv_b_proj (rows
  // per head [k_nope; v]).
  Tensor q_a_w, q_a_b, q_a_norm_w, q_b_w, kv_a_w, kv_a_b, kv_a_norm_w, kv_b_w;
  // GPT-OSS's biases: router [E], experts [E, 2I] (rows [gate; up]) and [E, hidden].
  Tensor router_b, experts_up_b, experts_down_b;
  Tensor sinks;  // ArchConfig::attn_sinks: [heads]
};

struct KvCache {
  std::vector<Tensor> k, v;  // [B, KV, capacity, hd]
  Tensor pos;                // [B, capacity]: the keys' positions (ALiBi)
  int64_t len = 0;
  // Rows of their own lengths (continuous batching's slots, generation.cpp): row b holds keys
  // 0..row_len[b]-1 at positions 0.., and a step of one token per row writes each at its
  // row's end. Empty: every row holds `len` keys (left padding).
  std::vector<int64_t> row_len;
  // With row_len: each row's prompt length. A step feeding a row's last prompt token computes
  // what transformers' prefill computes for it (all the prompt's keys), a later step what its
  // decoding step does (transformer_impl.hpp, attend_heads). Empty: every step decodes.
  std::vector<int64_t> prompt_len;
};

}  // namespace detail

using detail::KvCache;
using detail::Layer;

// A span's score from `picked` (the targets' log-probs in order, from position k on) and the
// argmax of each scored row (`row_of[k]`: the row of the k-th target). transformer.cpp.
SpanScore span_score(const Tensor& picked, const int64_t* greedy,
                     const std::vector<int64_t>& row_of, size_t k,
                     const std::vector<Token>& targets);
// Every span of every branch of `trees`, in order, from the picked targets (as span_score).
std::vector<std::vector<std::vector<SpanScore>>> tree_scores(const std::vector<ScoreTree>& trees,
                                                             const Tensor& picked,
                                                             const int64_t* greedy,
                                                             const std::vector<int64_t>& row_of);

struct Transformer::Impl {
  ArchConfig cfg;
  at::Device device{at::kCPU};
  at::ScalarType dtype = at::kFloat;
  at::ScalarType softmax_dtype = at::kFloat;
  int64_t n_params = 0;
  int64_t simulated_limit_tokens = 0;                // Transformer::simulate_memory_limit
  std::string config_path;                           // config.json, for messages
  int64_t prefill_computed = 0, prefill_copied = 0;  // Transformer::prefill_tokens
  // Ids index the embedding table and the log-probs rows, and positions a learned position
  // table, without bounds checks: an id past vocab_size (a tokenizer of another model) or a
  // sequence past the position table (max_length above n_positions) is refused here first.
  void check_tokens(const std::vector<Token>& ids) const;
  void check_positions(int64_t positions) const;
  void check_rows(const std::vector<ScoreRow>& rows, int64_t prefix_len = 0) const;
  void check_simulated_limit(int64_t tokens) const {
    if (simulated_limit_tokens > 0 && tokens > simulated_limit_tokens)
      throw OutOfMemory("simulated out of memory: " + std::to_string(tokens) + " tokens > " +
                        std::to_string(simulated_limit_tokens));
  }

  Tensor embed, pos_embed, final_w, final_b, head_w, head_b, embed_normalizer;
  Tensor proj_in, proj_out;           // OPT word_embed_proj_dim != hidden_size
  Tensor embed_norm_w, embed_norm_b;  // ArchConfig::embed_norm
  // Rotary frequencies per variant (rope.hpp), on the device; cos and sin are scaled by
  // cfg.rope_attention_factor.
  std::map<int64_t, Tensor> inv_freq;
  const Tensor& inv_freq_for_length(int64_t length) {
    const int64_t key = length == kLocalRopeVariant ? length : rope_variant(cfg, length);
    auto it = inv_freq.find(key);
    if (it == inv_freq.end()) it = inv_freq.emplace(key, rope_inv_freq(cfg, key).to(device)).first;
    return it->second;
  }
  std::vector<Layer> layers;

  at::TensorOptions fopt() const { return at::TensorOptions().dtype(dtype).device(device); }
  at::TensorOptions lopt() const { return at::TensorOptions().dtype(at::kLong).device(device); }

  // ----- batch-invariant float32 CPU path (prefix_forward.cpp) ----------------------------
  // A sequence of the stacked batch: rows [row0, row0 + len); its keys are those of `parent`
  // (a sequence earlier in the batch, -1 = none) followed by its own, and its positions start
  // at the parent's length.
  struct Seq {
    int64_t row0 = 0, len = 0;
    int64_t parent = -1;
  };
  bool invariant_path() const {
    return !device_path() && dtype == at::kFloat && softmax_dtype == at::kFloat;
  }
  // The device path: padded batches, batched attention kernels (SDPA on CUDA), prefix trees
  // as rows with a tree mask. Runs on the CPU too when a test asks (LoadOptions::device_path).
  bool force_device_path = false;
  bool device_path() const { return device.is_cuda() || force_device_path; }
  // Hidden states [rows, hidden] before the final norm (a view of the workspace: valid until
  // the next call).
  Tensor forward_invariant(const std::vector<Token>& ids, const std::vector<Seq>& seqs);
  // The mixture-of-experts MLP of layer L over N rows of `in` into `out` (as moe()).
  void moe_rows(const float* in, float* out, int64_t N, const Layer& L);
  // Log-softmax rows [n, vocab] (float32) of hidden rows [n, hidden].
  Tensor logprobs_invariant(const Tensor& hidden_rows);
  // cos/sin tables [position][rotary_dim] of one frequency variant, grown on demand.
  struct RopeTable {
    std::vector<float> cos, sin;
    int64_t rows = 0;
  };
  std::map<int64_t, RopeTable> rope_tables;
  const RopeTable& rope_table(int64_t variant, int64_t positions);
  // Multi-head latent attention's q, k and v of N rows of `in` into qkv rows laid out as the
  // attention of forward_invariant reads them ([q heads; k heads; v heads], each head
  // cfg.head_dim wide, zero-padded), rotary embedding applied (row i at position pos[i] of
  // tables[i]); and the attention's output rows compacted in place from head_dim to v_head_dim
  // per head, the width of o_proj (returned). mla.cpp.
  void mla_rows(const float* in, float* qkv, int64_t N, const Layer& L, const int64_t* pos,
                const RopeTable* const* tables);
  int64_t mla_compact(float* att, int64_t N) const;
  // Buffers of forward_invariant kept between batches (grown, never shrunk), so that batches
  // of other sizes do not leave the allocator holding freed blocks beside new ones.
  std::vector<Tensor> workspace;
  Tensor buffer(size_t slot, int64_t rows, int64_t cols);

  // ----- device path (tree_rows.cpp) ------------------------------------------------------
  // Prefix trees as rows (prefix, then every branch) under a tree mask: [tree][branch][span].
  std::vector<std::vector<std::vector<SpanScore>>> score_tree_rows(
      const std::vector<ScoreTree>& trees);
  // Log-probs of the targets and the argmax of scored rows: `flat` are rows of `hidden`
  // [N, hidden]; target k is column pick_col[k] of scored row pick_row[k] (an index into
  // `flat`). Returns (picked float32 [targets], greedy int64 [flat]) on the CPU; the LM head
  // and log-softmax run in chunks of rows, so no [rows x vocab] tensor outgrows a chunk.
  std::pair<Tensor, Tensor> pick_scores(const Tensor& hidden, const std::vector<int64_t>& flat,
                                        const std::vector<int64_t>& pick_row,
                                        const std::vector<int64_t>& pick_col);

  // ----- loading -------------------------------------------------------------------------
  void load_weights(const WeightArchive& w);
  Tensor take(const WeightArchive& w, const std::vector<std::string>& names,
              const std::vector<int64_t>& shape, bool required, bool count = true);
  std::set<std::string> used_tensors;  // names take() found, for the unused-tensor warning
  // Kept after the load of a model with a peft adapter only, to switch to another adapter.
  std::unique_ptr<WeightArchive> adapter_archive;
  void warn_unused(const WeightArchive& w) const;

  // ----- forward -------------------------------------------------------------------------
  Tensor norm(const Tensor& x, const Tensor& w, const Tensor& b) const {
    if (cfg.layer_norm_formula && reduced_on_cpu(x)) {  // weight [N] or one per head [heads, hd]
      Tensor y = normalized_by_formula(x, cfg.norm_eps) * w.to(at::kFloat);
      return (b.defined() ? y + b.to(at::kFloat) : y).to(x.scalar_type());
    }
    // LayerNorms (CohereLayerNorm's weight per head too) compute in float32, weight included.
    if (cfg.norm == NormKind::kLayerNorm && w.dim() > 1) {  // a weight per head [heads, hd]
      return via_float(x, [&](const Tensor& t) {
        Tensor y = at::layer_norm(t, {t.size(-1)}, {}, {}, cfg.norm_eps) * like(w, t);
        return b.defined() ? y + like(b, t) : y;
      });
    }
    if (cfg.norm == NormKind::kLayerNorm && reduced_on_cpu(x))
      return layer_norm_half(x, w, b, cfg.norm_eps);
    if (cfg.norm == NormKind::kLayerNorm)
      return via_float(x, [&](const Tensor& t) {
        return at::layer_norm(t, {t.size(-1)}, like(w, t), like(b, t), cfg.norm_eps);
      });
    Tensor xf = x.to(at::kFloat);
    Tensor var = xf.pow(2).mean(-1, true);
    xf = xf * at::rsqrt(var + cfg.norm_eps);
    if (cfg.norm_plus_one) return (xf * (w.to(at::kFloat) + 1.0)).to(x.scalar_type());
    if (cfg.norm_weight_in_float32) return (w * xf).to(x.scalar_type());
    return w * xf.to(x.scalar_type());
  }
  Tensor act(const Tensor& x) const { return activate(x, cfg.activation); }
  // A block's projection: nn.Linear (the bias inside the product's one rounding) or, for
  // FalconLinear, the product rounded and then the bias added.
  Tensor layer_linear(const Tensor& x, const Tensor& w, const Tensor& b) const {
    const bool half = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
    if (Tensor y = few_rows_linear(x, w, b); y.defined()) return y;
    if (!cfg.bias_after_product || !b.defined() || !half) return linear_rounded(x, w, b);
    return linear_rounded(x, w) + like(b, x);
  }
  static Tensor rotate_half(const Tensor& x) {
    const int64_t h = x.size(-1) / 2;
    return at::cat({-x.narrow(-1, h, h), x.narrow(-1, 0, h)}, -1);
  }
  // GPT-J's rotate_every_two / Cohere's rotate_half: (x[2i], x[2i+1]) by frequency i; cos and
  // sin hold each frequency twice ([f0..f(h-1), f0..f(h-1)]), so their first half is used.
  Tensor rope_interleaved(const Tensor& x, const Tensor& cos, const Tensor& sin) const {
    const int64_t h = x.size(-1) / 2;
    std::vector<int64_t> pairs = x.sizes().vec();
    pairs.back() = h;
    pairs.push_back(2);
    Tensor xp = x.reshape(pairs);
    Tensor x1 = xp.select(-1, 0), x2 = xp.select(-1, 1);
    Tensor c = cos.narrow(-1, 0, h), s = sin.narrow(-1, 0, h);
    return at::stack({x1 * c - x2 * s, x2 * c + x1 * s}, -1).flatten(-2);
  }
  Tensor apply_rope(const Tensor& x, const Tensor& cos, const Tensor& sin) const {
    if (cfg.rope_in_float32 && x.scalar_type() != cos.scalar_type())
      return apply_rope(x.to(cos.scalar_type()), cos, sin).to(x.scalar_type());
    const int64_t rd = cfg.rotary_dim;
    if (cfg.rope_interleaved) {
      if (rd == x.size(-1)) return rope_interleaved(x, cos, sin);
      return at::cat(
          {rope_interleaved(x.narrow(-1, 0, rd), cos, sin), x.narrow(-1, rd, x.size(-1) - rd)}, -1);
    }
    if (rd == x.size(-1)) {
      if (Tensor y = rope_rotate_half_cpu(x, cos, sin); y.defined()) return y;
      return x * cos + rotate_half(x) * sin;
    }
    Tensor xr = x.narrow(-1, 0, rd);
    Tensor xp = x.narrow(-1, rd, x.size(-1) - rd);
    return at::cat({xr * cos + rotate_half(xr) * sin, xp}, -1);
  }

  // Boolean [B|1, 1, T, S] mask: true = may attend. chunk > 0: only keys of the query's own
  // chunk of positions (a real token's position: the real tokens before it).
  Tensor make_mask(int64_t T, int64_t S, int64_t past, const Tensor& key_keep, int64_t window,
                   int64_t chunk = 0) const {
    Tensor q = at::arange(past, past + T, lopt()).unsqueeze(1);
    Tensor k = at::arange(0, S, lopt()).unsqueeze(0);
    Tensor allow = k.le(q);
    if (window > 0) allow = allow.logical_and((q - k).lt(window));
    allow = allow.unsqueeze(0).unsqueeze(0);
    if (key_keep.defined()) {
      allow = allow.logical_and(key_keep.narrow(1, 0, S).unsqueeze(1).unsqueeze(1));
      // A padding query with nothing to attend to would give NaN; let it see itself.
      allow = allow.logical_or(k.eq(q).unsqueeze(0).unsqueeze(0));
    }
    if (chunk > 0) {
      // create_chunked_causal_mask counts chunks from each row's first real token.
      Tensor kpos = key_keep.defined() ? key_keep.narrow(1, 0, S).to(at::kLong).cumsum(1) - 1
                                       : k;  // [B|1, S]
      Tensor kc = at::div(kpos, chunk, "floor");
      allow =
          allow.logical_and(kc.narrow(1, past, T).unsqueeze(2).eq(kc.unsqueeze(1)).unsqueeze(1));
    }
    return allow;
  }

  // bias (ALiBi, [B|1, H, 1, S]) and sinks ([H]) may be undefined.
  // rows, call_keys: how the reference computes each batch row and the length of its call
  // (reduced_attention.hpp); null: a prefill of the call's keys.
  Tensor attention(const Tensor& q, Tensor k, Tensor v, const Tensor& mask, bool causal_only,
                   const Tensor& bias = {}, const Tensor& sinks = {},
                   const std::vector<FlashRow>* rows = nullptr,
                   const std::vector<int64_t>* call_keys = nullptr) const {
    const int64_t H = cfg.num_heads, KV = cfg.num_kv_heads;
    if (H != KV && grouped_decode(q, k, v, sinks)) return attention_grouped(q, k, v, mask, bias);
    if (H != KV) {
      const int64_t rep = H / KV;
      const std::vector<int64_t> sz = k.sizes().vec();
      k = k.unsqueeze(2).expand({sz[0], KV, rep, sz[2], sz[3]}).reshape({sz[0], H, sz[2], sz[3]});
      v = v.unsqueeze(2).expand({sz[0], KV, rep, sz[2], sz[3]}).reshape({sz[0], H, sz[2], sz[3]});
    }
#if TORCH_VERSION_MAJOR >= 2 && (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 1)
    if (cfg.attn_softcap == 0.0 && device.is_cuda() && !sinks.defined()) {
      if (bias.defined())  // ALiBi as a float mask (Falcon's SDPA path does the same)
        return at::scaled_dot_product_attention(
            q, k, v,
            at::where(mask, bias.to(q.scalar_type()),
                      at::scalar_tensor(-std::numeric_limits<float>::infinity(), q.options())),
            0.0, false, cfg.attn_scale);
      if (causal_only)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true, cfg.attn_scale);
      return at::scaled_dot_product_attention(q, k, v, mask, 0.0, false, cfg.attn_scale);
    }
#endif
    if (reduced_on_cpu(q) && cfg.attention_impl == AttnImpl::kSdpa)
      return sdpa_cpu(q, k, v, mask, causal_only, bias, rows ? *rows : std::vector<FlashRow>{},
                      call_keys ? *call_keys : std::vector<int64_t>{});
    Tensor s = scores(q, k, bias);
    // transformers fills with torch.finfo(dtype).min: float's lowest does not fit a bfloat16 or
    // float16 score (libtorch refuses the conversion).
    const double fill = s.scalar_type() == at::kHalf       ? -65504.0
                        : s.scalar_type() == at::kBFloat16 ? -3.3895313892515355e38
                                                           : std::numeric_limits<float>::lowest();
    s = s.masked_fill(mask.logical_not(), fill);
    if (sinks.defined()) {
      // GPT-OSS eager_attention_forward: the head's sink joins each row, the row's maximum is
      // subtracted, and the sink's probability is dropped after the softmax.
      Tensor sk = sinks.to(s.scalar_type())
                      .view({1, -1, 1, 1})
                      .expand({s.size(0), s.size(1), s.size(2), 1});
      Tensor all = at::cat({s, sk}, -1);
      all = all - std::get<0>(all.max(-1, true));
      Tensor p = at::softmax(all, -1, at::kFloat).narrow(-1, 0, s.size(-1)).to(q.scalar_type());
      return matmul_rounded(p, v);
    }
    Tensor p = at::softmax(s, -1, at::kFloat).to(q.scalar_type());
    return matmul_rounded(p, v);
  }
  // ATen's CPU bmm (bmm_out_or_baddbmm_) multiplies each matrix of a batch with BLAS when
  // contraction x rows x columns reaches this, else with its own loop (other roundings).
  static constexpr int64_t kBlasMinWork = 400;
  // A decoding step's grouped-query attention on the CPU (one query per row, float32/64, no
  // sinks) where every product the expanded form makes goes through BLAS: then the heads of a
  // key/value group multiply its keys as one matrix of `rep` rows instead of each its own copy of
  // them (repeat_kv), which gives the same numbers (each output is one dot product in BLAS's
  // order) without copying the whole cache every layer and step.
  bool grouped_decode(const Tensor& q, const Tensor& k, const Tensor& v,
                      const Tensor& sinks) const {
    return q.size(2) == 1 && !q.is_cuda() && !reduced_on_cpu(q) && !sinks.defined() &&
           k.size(2) * std::min(q.size(-1), v.size(-1)) >= kBlasMinWork;
  }
  // attention() for grouped_decode: q [B, H, 1, qk], k [B, KV, S, qk], v [B, KV, S, vd].
  Tensor attention_grouped(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                           const Tensor& bias) const {
    const int64_t B = q.size(0), H = cfg.num_heads, KV = cfg.num_kv_heads, rep = H / KV;
    const int64_t S = k.size(2);
    Tensor s = scores(q.reshape({B, KV, rep, q.size(-1)}), k,
                      bias.defined() ? bias.reshape({bias.size(0), KV, rep, S}) : bias);
    s.masked_fill_(mask.logical_not(), std::numeric_limits<float>::lowest());  // s is new
    Tensor p = at::softmax(s, -1, at::kFloat).to(q.scalar_type());
    return at::matmul(p, v).view({B, H, 1, v.size(-1)});
  }
  // The eager attention's scores: scale·(q·k), soft-capped, plus the bias (ALiBi) after the scale
  // (BLOOM's baddbmm, MPT, Falcon's mask), with the family's roundings in float16/bfloat16.
  Tensor scores(const Tensor& q, const Tensor& k, const Tensor& bias) const {
    const Tensor kt = k.transpose(-1, -2);
    if (reduced_on_cpu(q) && cfg.attention_impl == AttnImpl::kEagerFloat32Scores)
      return at::matmul(q.to(at::kFloat), kt.to(at::kFloat)) * cfg.attn_scale;
    if (reduced_on_cpu(q) && cfg.attention_impl == AttnImpl::kEagerFusedBias && bias.defined())
      return (at::matmul(q.to(at::kFloat), kt.to(at::kFloat)) * cfg.attn_scale +
              bias.to(at::kFloat))
          .to(q.scalar_type());
    Tensor s = scaled(matmul_rounded(q, kt), cfg.attn_scale);
    if (cfg.attn_softcap > 0.0) {
      const double cap = cfg.attn_softcap;
      s = via_float(s, [cap](const Tensor& t) { return t / cap; });
      s = scaled(via_float(s, [](const Tensor& t) { return at::tanh(t); }), cap);
    }
    return bias.defined() ? s + bias : s;
  }
  // torch's CPU flash attention (scaled_dot_product_attention) in float16/bfloat16.
  // reduced_attention.cpp.
  Tensor sdpa_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                  bool causal_only, const Tensor& bias, const std::vector<FlashRow>& rows,
                  const std::vector<int64_t>& call_keys) const;

  // cos and sin [B, 1, T, rotary_dim] (model dtype) for positions [B, T]. A row's frequency
  // variant comes from its length: `lengths` (right-padded rows), else its largest position + 1
  // (left padding sits at position 0; a decoding step's one position is the row's last).
  void rope_cos_sin(const Tensor& pos, const std::vector<int64_t>* lengths, Tensor& cos,
                    Tensor& sin, bool local = false) {
    Tensor inv;
    if (local) {
      inv = inv_freq_for_length(kLocalRopeVariant);
    } else if (rope_length_dependent(cfg)) {
      const int64_t B = pos.size(0);
      Tensor last = pos.amax(1).to(at::kCPU).contiguous();
      std::vector<Tensor> rows;
      for (int64_t b = 0; b < B; ++b)
        rows.push_back(
            inv_freq_for_length(lengths ? (*lengths)[b] : last.data_ptr<int64_t>()[b] + 1));
      inv = at::stack(rows).unsqueeze(1);  // [B, 1, rd/2]
    } else {
      inv = inv_freq_for_length(0);
    }
    Tensor freqs = pos.to(at::kFloat).unsqueeze(-1) * inv;
    Tensor emb = at::cat({freqs, freqs}, -1);
    if (cfg.rope_polar && emb.is_cpu()) {
      const Tensor e = emb.contiguous();
      cos = at::empty_like(e);
      sin = at::empty_like(e);
      const float* x = e.data_ptr<float>();
      float* c = cos.data_ptr<float>();
      float* s = sin.data_ptr<float>();
      for (int64_t i = 0; i < e.numel(); ++i) {
        c[i] = std::cos(x[i]);
        s[i] = std::sin(x[i]);
      }
    } else {
      cos = emb.cos();
      sin = emb.sin();
    }
    if (!local && cfg.rope_attention_factor != 1.0) {
      cos = cos * cfg.rope_attention_factor;
      sin = sin * cfg.rope_attention_factor;
    }
    // float64 models keep float64 tables; reduced dtypes keep float32 ones where the family does.
    const bool keep = cfg.rope_in_float32 && (dtype == at::kHalf || dtype == at::kBFloat16);
    if (keep && cfg.rope_tables_rounded) {
      cos = cos.to(dtype).to(at::kFloat);
      sin = sin.to(dtype).to(at::kFloat);
    }
    cos = (keep ? cos : cos.to(dtype)).unsqueeze(1);
    sin = (keep ? sin : sin.to(dtype)).unsqueeze(1);
  }

  // The ALiBi bias [B, H, 1, S] of keys at positions kpos [B, S], as alibi_bias computes it
  // (float32 for MPT, whose bias joins the scores in float32; the model dtype for BLOOM and
  // Falcon, whose build_alibi_tensor casts it).
  Tensor alibi_tensor(const Tensor& kpos) const {
    Tensor slopes =
        at::tensor(at::ArrayRef<float>(cfg.alibi_slopes), at::kFloat).to(device).view({1, -1, 1});
    Tensor p = kpos.unsqueeze(1);  // [B, 1, S]
    Tensor b;
    if (cfg.alibi == Alibi::kKeyPositionBf16) {
      b = (slopes.to(at::kBFloat16) * p.to(at::kBFloat16)).to(at::kFloat) /
          std::sqrt(static_cast<double>(cfg.head_dim));
    } else if (cfg.alibi == Alibi::kFromLastKey) {
      b = slopes * (p - p.amax(-1, true)).to(at::kFloat);
    } else {
      b = slopes * p.to(at::kFloat);
    }
    if (cfg.alibi != Alibi::kFromLastKey) b = b.to(dtype);
    return b.unsqueeze(2);
  }

  // Hidden states [B, T, hidden] before the final norm.
  // `lengths` (right-padded scoring batches): attention runs per row over its real tokens only,
  // so that a row's numbers do not depend on the padding around it.
  // `tree_allow` (no cache): an explicit [B, 1, T, T] mask of which keys each query may see
  // (prefix trees laid out as rows: tree_rows.cpp); sliding windows are applied on top of it by
  // position.
  // `cache_only`: only the cache's keys and values are wanted (a prompt's prefill before its
  // generation): the last layer stops once it stored them, and the result is not the hidden
  // states.
  Tensor forward(const Tensor& ids, const Tensor& pos, KvCache* cache, const Tensor& key_keep,
                 const std::vector<int64_t>* lengths = nullptr, const Tensor& tree_allow = {},
                 bool cache_only = false) {
    const int64_t B = ids.size(0), T = ids.size(1);
    debug::dump_begin(ids);
    Tensor h = at::embedding(embed, ids);
    if (proj_in.defined()) h = linear_rounded(h, proj_in);
    if (cfg.embed_scale) h = h * embed_normalizer;
    if (cfg.embedding_multiplier != 1.0) h = scaled(h, cfg.embedding_multiplier);  // Granite
    if (pos_embed.defined()) h = h + at::embedding(pos_embed, pos + cfg.position_offset);
    if (cfg.embed_norm) h = norm(h, embed_norm_w, embed_norm_b);  // BLOOM
    debug::dump("embed", h);
    Tensor cos, sin, cos_local, sin_local;
    if (cfg.rope != RopeType::kNone) rope_cos_sin(pos, lengths, cos, sin);
    if (cfg.rope != RopeType::kNone && cfg.rope_local_theta > 0.0)
      rope_cos_sin(pos, lengths, cos_local, sin_local, true);
    const bool own_lengths = cache && !cache->row_len.empty();
    if (own_lengths) return forward_own_lengths(h, pos, *cache, cos, sin, cos_local, sin_local);
    const int64_t past = cache ? cache->len : 0;
    const int64_t S = past + T;
    Tensor alibi;
    if (cfg.alibi != Alibi::kNone) {
      Tensor kpos = pos;
      if (cache) {
        if (!cache->pos.defined()) cache->pos = at::zeros({B, cache->k[0].size(2)}, lopt());
        cache->pos.narrow(1, past, T).copy_(pos);
        kpos = cache->pos.narrow(1, 0, S);
      }
      alibi = alibi_tensor(kpos);
    }
    std::map<int64_t, Tensor> masks;
    const bool causal_only = !key_keep.defined() && past == 0 && !tree_allow.defined();
    for (int64_t ch : cfg.layer_attention_chunk) {  // keyed -chunk (Llama 4's chunked layers)
      if (ch <= 0 || ch >= S || masks.count(-ch)) continue;
      if (!tree_allow.defined()) {
        masks[-ch] = make_mask(T, S, past, key_keep, 0, ch);
      } else {
        Tensor pc = at::div(pos, ch, "floor");  // [B, T]: chunks by position
        masks[-ch] = tree_allow.logical_and(pc.unsqueeze(2).eq(pc.unsqueeze(1)).unsqueeze(1));
      }
    }
    for (int64_t w : cfg.layer_sliding_window) {
      const int64_t eff = (w > 0 && w < S) ? w : 0;
      if (masks.count(eff)) continue;
      if (!tree_allow.defined()) {
        masks[eff] = make_mask(T, S, past, key_keep, eff);
      } else if (eff == 0) {
        masks[eff] = tree_allow;
      } else {
        Tensor gap = pos.unsqueeze(2) - pos.unsqueeze(1);  // [B, T(query), T(key)]
        masks[eff] = tree_allow.logical_and(gap.lt(eff).unsqueeze(1));
      }
    }
    AtenBlockOps ops{*this,
                     {h, {}, {}, {}},
                     {B, T, past, S, cos, sin, cos_local, sin_local, cache, lengths, causal_only,
                      masks, pos, alibi, !key_keep.defined() && !tree_allow.defined()}};
    for (size_t li = 0; li < layers.size(); ++li) {
      debug::dump_layer(static_cast<int>(li));
      const bool keys_only = cache && cache_only && li + 1 == layers.size();
      ops.batch.keys_only = keys_only;
      run_block(cfg, layers[li], li, ops, keys_only);
      if (!keys_only) debug::dump("out", ops.at(BlockBuf::kHidden));
    }
    debug::dump_layer(-1);
    if (cache) cache->len = S;
    return ops.at(BlockBuf::kHidden);
  }

  // forward's decoding step over rows of their own lengths (KvCache::row_len): one token per
  // row at position pos[b] = row_len[b], attending to its row's keys 0..pos[b] only.
  Tensor forward_own_lengths(const Tensor& h, const Tensor& pos, KvCache& cache, const Tensor& cos,
                             const Tensor& sin, const Tensor& cos_local, const Tensor& sin_local) {
    const int64_t B = h.size(0), T = h.size(1);
    if (T != 1) throw RuntimeError("internal: rows of their own lengths decode one token each");
    const int64_t S = *std::max_element(cache.row_len.begin(), cache.row_len.end()) + 1;
    Tensor k = at::arange(0, S, lopt()).unsqueeze(0);  // [1, S] key positions
    Tensor q = pos;                                    // [B, 1] query positions
    Tensor alibi;
    // A key past its row's end is masked; clamped, it leaves MPT's "from the last key" bias
    // counting from the row's own last key.
    if (cfg.alibi != Alibi::kNone) alibi = alibi_tensor(at::minimum(k.expand({B, S}), q));
    auto row_mask = [&](int64_t window, int64_t chunk) {
      Tensor allow = k.le(q);
      if (window > 0) allow = allow.logical_and((q - k).lt(window));
      if (chunk > 0)
        allow = allow.logical_and(at::div(k, chunk, "floor").eq(at::div(q, chunk, "floor")));
      return allow.view({B, 1, 1, S});
    };
    std::map<int64_t, Tensor> masks;
    for (int64_t ch : cfg.layer_attention_chunk)
      if (ch > 0 && ch < S && !masks.count(-ch)) masks[-ch] = row_mask(0, ch);
    for (int64_t w : cfg.layer_sliding_window) {
      const int64_t eff = (w > 0 && w < S) ? w : 0;
      if (!masks.count(eff)) masks[eff] = row_mask(eff, 0);
    }
    AtenBlockOps ops{
        *this,
        {h, {}, {}, {}},
        {B, T, -1, S, cos, sin, cos_local, sin_local, &cache, nullptr, false, masks, pos, alibi}};
    for (size_t li = 0; li < layers.size(); ++li) {
      debug::dump_layer(static_cast<int>(li));
      run_block(cfg, layers[li], li, ops);
      debug::dump("out", ops.at(BlockBuf::kHidden));
    }
    debug::dump_layer(-1);
    for (auto& n : cache.row_len) ++n;
    return ops.at(BlockBuf::kHidden);
  }

  // What a layer's attention needs of its batch (forward's locals).
  struct AttnBatch {
    int64_t B, T, past, S;
    const Tensor &cos, &sin;
    const Tensor &cos_local, &sin_local;  // sliding-window layers' own frequencies (Gemma3)
    KvCache* cache;
    const std::vector<int64_t>* lengths;
    bool causal_only;
    std::map<int64_t, Tensor>& masks;  // by effective sliding window (0 = none), -chunk
    const Tensor& pos;                 // [B, T] positions
    const Tensor& alibi;               // [B, H, 1, S] or undefined
    bool positional = false;           // masks from positions alone (no padding, no tree)
    bool keys_only = false;  // the layer's attention stores its keys and values, nothing more
  };

  // Batch row b's positions in the reference's own call of that sequence alone, whose shape picks
  // torch's kernels: this call's rows are positions first .. first + T - 1 of a call over
  // `positions` (the whole sequence; a decoding step's one position; the prompt's last token as
  // its prefill's last row; a prefill without that token as the rows of the full prefill).
  struct RowCall {
    int64_t first, positions;
  };
  RowCall row_call(const AttnBatch& c, int64_t b) const {
    if (c.cache && !c.cache->row_len.empty()) {
      if (flash_row(*c.cache, b) != FlashRow::kPromptEnd) return {0, 1};
      const int64_t at = c.cache->row_len[static_cast<size_t>(b)];
      return {at, at + 1};
    }
    if (c.lengths && c.B == 1 && (*c.lengths)[0] > c.S) return {c.past, (*c.lengths)[0]};
    return {c.past, c.S};
  }
  // Each batch row's reference call length (row_call), for the kernels that follow it.
  std::vector<int64_t> call_rows(const AttnBatch& c) const {
    std::vector<int64_t> rows;
    for (int64_t b = 0; b < c.B; ++b) rows.push_back(row_call(c, b).positions);
    return rows;
  }

  // apply_rotary_emb's complex product (DeepSeek-V2, Llama 4: ArchConfig::rope_polar) of x
  // [B, heads, T, rd] on the CPU, its pairs rounded as torch's mul kernel rounds each element of
  // its run (rotate_pairs_polar) in the row's reference call (row_call). heads_inside: Llama 4's
  // layout [B, T, heads, rd], where freqs_cis broadcasts over the heads and each position is a
  // run of its own unless there is one head; DeepSeek-V2's [B, heads, T, rd] runs over the call's
  // positions.
  Tensor polar_rope(const Tensor& x, const AttnBatch& c, bool heads_inside) const {
    const int64_t B = x.size(0), Hx = x.size(1), T = x.size(2), rd = x.size(3), pairs = rd / 2;
    Tensor out = at::empty({B, Hx, T, rd}, x.options().dtype(at::kFloat));
    out.copy_(x);
    const Tensor cs = c.cos.to(at::kFloat).expand({B, 1, T, rd}).contiguous();
    const Tensor sn = c.sin.to(at::kFloat).expand({B, 1, T, rd}).contiguous();
    const bool own_runs = heads_inside && Hx > 1;
    float* o = out.data_ptr<float>();
    const float* cp = cs.data_ptr<float>();
    const float* sp = sn.data_ptr<float>();
    for (int64_t b = 0; b < B; ++b) {
      const RowCall call = row_call(c, b);
      for (int64_t h = 0; h < Hx; ++h)
        for (int64_t t = 0; t < T; ++t)
          rotate_pairs_polar(o + ((b * Hx + h) * T + t) * rd, cp + (b * T + t) * rd,
                             sp + (b * T + t) * rd, pairs, own_runs ? 0 : (call.first + t) * pairs,
                             own_runs ? pairs : call.positions * pairs);
    }
    return out.to(x.scalar_type());
  }

  // The output projection of layer li's self-attention over x [B, T, hidden].
  Tensor self_attention(const Tensor& x, size_t li, const AttnBatch& c) {
    const Layer& L = layers[li];
    if (cfg.mla.enabled()) return mla_attention(x, li, c);
    const int64_t B = c.B, T = c.T;
    const int64_t H = cfg.num_heads, KV = cfg.num_kv_heads, hd = cfg.head_dim;
    Tensor qkv = layer_linear(x, L.qkv_w, L.qkv_b);
    debug::dump("qkv", qkv);
    Tensor q = qkv.narrow(-1, 0, H * hd);
    Tensor k = qkv.narrow(-1, H * hd, KV * hd);
    Tensor v = qkv.narrow(-1, (H + KV) * hd, KV * hd).view({B, T, KV, hd});
    if (cfg.qk_norm == QkNorm::kWhole) {  // OLMo2: over all heads' q (and k) at once
      q = norm(q, L.q_norm_w, L.q_norm_b);
      k = norm(k, L.k_norm_w, L.k_norm_b);
    }
    if (cfg.clip_qkv > 0.0) {
      auto clip = [c = cfg.clip_qkv](const Tensor& t) { return t.clamp(-c, c); };
      q = via_float(q, clip);
      k = via_float(k, clip);
      v = via_float(v, clip);
    }
    q = q.reshape({B, T, H, hd});
    k = k.reshape({B, T, KV, hd});
    if (cfg.qk_norm == QkNorm::kPerHead || cfg.qk_norm == QkNorm::kPerHeadWeights) {
      q = norm(q, L.q_norm_w, L.q_norm_b);
      k = norm(k, L.k_norm_w, L.k_norm_b);
    }
    q = q.transpose(1, 2);
    k = k.transpose(1, 2);
    v = v.transpose(1, 2);
    if (c.cos.defined() && cfg.uses_rope(li)) {
      const bool local = cfg.uses_local_rope(li);
      if (cfg.rope_polar && q.is_cpu() && !local) {
        q = polar_rope(q, c, true);
        k = polar_rope(k, c, true);
      } else {
        q = apply_rope(q, local ? c.cos_local : c.cos, local ? c.sin_local : c.sin);
        k = apply_rope(k, local ? c.cos_local : c.cos, local ? c.sin_local : c.sin);
      }
    }
    if (cfg.qk_norm == QkNorm::kL2AfterRope && cfg.uses_rope(li)) {  // Llama4TextL2Norm
      q = l2_norm(q);
      k = l2_norm(k);
    }
    if (cfg.attn_floor_scale > 0.0 && !cfg.uses_rope(li)) q = temperature_tuned(q, c.pos);
    debug::dump("q_rope", q);
    debug::dump("k_rope", k);
    if (c.keys_only && c.cache && c.cache->row_len.empty()) {
      c.cache->k[li].narrow(2, c.past, c.T).copy_(k);
      c.cache->v[li].narrow(2, c.past, c.T).copy_(v);
      return {};
    }
    const Tensor a = attend_heads(q, k, v, li, c);
    debug::dump("attn", a);
    return layer_linear(a, L.o_w, L.o_b);
  }

  Tensor l2_norm(const Tensor& x) const {
    Tensor xf = x.to(at::kFloat);
    return (xf * at::rsqrt(xf.pow(2).mean(-1, true) + cfg.norm_eps)).to(x.scalar_type());
  }
  // Llama4TextAttention's attn_temperature_tuning of q [B, H, T, hd] at positions [B, T]. Its
  // positions are the cache's (arange + past): the same but for left padding, where lm-eval
  // keeps each sequence's own numbers (docs/fidelity.md).
  Tensor temperature_tuned(const Tensor& q, const Tensor& pos) const {
    Tensor s = at::log1p(at::floor((pos.to(at::kFloat) + 1.0) / cfg.attn_floor_scale)) *
                   cfg.attn_temperature_scale +
               1.0;
    return (q * s.unsqueeze(1).unsqueeze(-1)).to(q.scalar_type());
  }

  // Layer li's attention of q [B, H, T, qk] over k [B, KV, T, qk] and v [B, KV, T, vd] (appended
  // to the cache, if any): [B, T, H * vd], before the output projection.
  Tensor attend_heads(const Tensor& q, Tensor k, Tensor v, size_t li, const AttnBatch& c) {
    const int64_t B = c.B, T = c.T, past = c.past, S = c.S;
    const int64_t w = cfg.layer_sliding_window[li], ch = cfg.attention_chunk(li);
    const int64_t eff = (w > 0 && w < S) ? w : 0;
    const int64_t key = ch > 0 && ch < S ? -ch : eff;  // the layer's mask in c.masks
    const Tensor& sinks = layers[li].sinks;
    // transformers' DynamicSlidingWindowLayer keeps only a sliding-window (or chunked) layer's last
    // window - 1 keys: a decoding step attends to those and its new one, all other keys being gone
    // rather than masked (its prefill sees every prompt key). The kernels' sums group keys by
    // their index (vector lanes, tails: reduced_attention.cpp), so lm-eval passes the same keys.
    const int64_t kept = w > 0 ? w - 1 : ch > 0 ? ch - 1 : -1;
    if (c.cache && !c.cache->row_len.empty()) {
      // One key per row, each written at its row's end (forward_own_lengths): rows of the
      // cache [B, KV, capacity, hd] seen as [B * KV * capacity, hd].
      const int64_t heads = k.size(1), cap = c.cache->k[li].size(2);
      Tensor at_ends;
      for (auto [dst, src] : {std::pair<Tensor*, Tensor*>{&c.cache->k[li], &k},
                              std::pair<Tensor*, Tensor*>{&c.cache->v[li], &v}}) {
        if (!dst->is_contiguous())
          throw RuntimeError("internal: a slot pool that is not contiguous");
        if (cpu_float32(*dst) && cpu_float32(*src)) {  // plain copies, not an indexing kernel
          const int64_t d = dst->size(3);
          float* out = dst->data_ptr<float>();
          const float* in = src->data_ptr<float>();
          for (int64_t b = 0; b < B; ++b)
            for (int64_t g = 0; g < heads; ++g) {
              float* o = out + ((b * heads + g) * cap + c.cache->row_len[b]) * d;
              const float* r = in + b * src->stride(0) + g * src->stride(1);
              for (int64_t e = 0; e < d; ++e) o[e] = r[e * src->stride(3)];
            }
          continue;
        }
        if (!at_ends.defined()) {
          std::vector<int64_t> ends;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t g = 0; g < heads; ++g)
              ends.push_back((b * heads + g) * cap + c.cache->row_len[b]);
          at_ends = at::tensor(at::ArrayRef<int64_t>(ends), at::kLong).to(device);
        }
        dst->view({-1, dst->size(3)}).index_copy_(0, at_ends, src->reshape({-1, src->size(3)}));
      }
      k = c.cache->k[li].narrow(2, 0, S);
      v = c.cache->v[li].narrow(2, 0, S);
      if (!sinks.defined() && !c.alibi.defined() && cfg.attn_softcap == 0.0) {
        // Each row's keys: its own up to its new one, within its chunk, else its window (the
        // masks of forward_own_lengths).
        std::vector<int64_t> first(B), last(B);
        for (int64_t b = 0; b < B; ++b) {
          last[b] = c.cache->row_len[b];
          first[b] = key < 0   ? last[b] / ch * ch
                     : eff > 0 ? std::max<int64_t>(0, last[b] - eff + 1)
                               : 0;
        }
        const Tensor a = decode_attention(q, k, v, first, last, cfg.attn_scale);
        if (a.defined()) return a.transpose(1, 2).reshape({B, T, -1});
      }
      // Batched rows of float32 keep the masked form: one call, within float32's noise.
      if (kept >= 0 && (B == 1 || reduced_on_cpu(q)))
        return attend_kept_rows(q, k, v, c.masks[key], c.alibi, sinks, kept, c);
    } else if (c.cache) {
      c.cache->k[li].narrow(2, past, T).copy_(k);
      c.cache->v[li].narrow(2, past, T).copy_(v);
      k = c.cache->k[li].narrow(2, 0, S);
      v = c.cache->v[li].narrow(2, 0, S);
    }
    // A decoding step of rows of their own lengths: each row as transformers computes it alone,
    // the last prompt token as its prefill's last row.
    std::vector<FlashRow> step_rows;
    if (c.cache && !c.cache->row_len.empty())
      for (int64_t b = 0; b < B; ++b) step_rows.push_back(flash_row(*c.cache, b));
    Tensor a;
    // The device path runs right-padded rows in one batched causal attention instead: a real
    // token never sees the padding after it, and the kernels' numbers may differ by batch.
    if (c.lengths && c.causal_only && B > 1 && !device_path()) {
      a = q.new_zeros({B, q.size(1), T, v.size(-1)});
      for (int64_t b = 0; b < B; ++b) {
        const int64_t n = (*c.lengths)[b];
        if (n == 0) continue;
        Tensor m = n == T ? c.masks[key] : make_mask(n, n, 0, {}, eff, key < 0 ? -key : 0);
        Tensor bias = c.alibi.defined() ? c.alibi.narrow(0, b, 1).narrow(3, 0, n) : Tensor();
        a.select(0, b).narrow(1, 0, n).copy_(
            attention(q.narrow(0, b, 1).narrow(2, 0, n).contiguous(),
                      k.narrow(0, b, 1).narrow(2, 0, n).contiguous(),
                      v.narrow(0, b, 1).narrow(2, 0, n).contiguous(), m, key == 0, bias, sinks)
                .squeeze(0));
      }
    } else {
      // A prompt's prefill without its last token (continuous batching feeds that with the
      // decoding steps): the reference's prefill call holds it (`lengths`: the sequence's).
      // A prompt's prefill in float32 on the CPU: the fused causal form.
      if (B == 1 && step_rows.empty() && c.positional && !device_path() && !c.alibi.defined() &&
          !sinks.defined() && cfg.attn_softcap == 0.0) {
        a = prefill_attention(q, k, v, past, eff, key < 0 ? -key : 0, cfg.attn_scale);
        if (a.defined()) return a.transpose(1, 2).reshape({B, T, -1});
      }
      std::vector<int64_t> call_keys;
      if (c.lengths && B == 1 && step_rows.empty() && (*c.lengths)[0] > S)
        call_keys.push_back((*c.lengths)[0]);
      a = attention(q, k, v, c.masks[key], c.causal_only && key == 0, c.alibi, sinks,
                    step_rows.empty() ? nullptr : &step_rows,
                    call_keys.empty() ? nullptr : &call_keys);
    }
    return a.transpose(1, 2).reshape({B, T, -1});
  }

  // A step's row b (KvCache::row_len): feeding its last prompt token, else decoding.
  static FlashRow flash_row(const KvCache& cache, int64_t b) {
    const auto i = static_cast<size_t>(b);
    return !cache.prompt_len.empty() && cache.row_len[i] + 1 == cache.prompt_len[i]
               ? FlashRow::kPromptEnd
               : FlashRow::kDecode;
  }

  // attend_heads' decoding step over rows of their own lengths for a layer that keeps `kept`
  // keys per row (above): each row over its last kept keys and its new one, as transformers'
  // cache holds them for that row alone, or over all its keys where it feeds its last prompt
  // token (KvCache::prompt_len). k and v are the slot pool [B, KV, S, hd], `mask` [B, 1, 1, S].
  Tensor attend_kept_rows(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                          const Tensor& alibi, const Tensor& sinks, int64_t kept,
                          const AttnBatch& c) const {
    const int64_t B = c.B, T = c.T;
    const std::vector<int64_t>& row_len = c.cache->row_len;
    Tensor a = q.new_zeros({B, q.size(1), T, v.size(-1)});
    for (int64_t b = 0; b < B; ++b) {
      const bool decoding =
          c.cache->prompt_len.empty() || row_len[b] >= c.cache->prompt_len[static_cast<size_t>(b)];
      const int64_t start = decoding ? std::max<int64_t>(0, row_len[b] - kept) : 0;
      const int64_t n = row_len[b] + 1 - start;
      auto row = [&](const Tensor& t) { return t.narrow(0, b, 1).narrow(2, start, n); };
      Tensor bias = alibi.defined() ? alibi.narrow(0, b, 1).narrow(3, start, n) : Tensor();
      const std::vector<FlashRow> layout{decoding ? FlashRow::kDecode : flash_row(*c.cache, b)};
      a.select(0, b).copy_(attention(q.narrow(0, b, 1), row(k), row(v),
                                     mask.narrow(0, b, 1).narrow(3, start, n), false, bias, sinks,
                                     &layout)
                               .squeeze(0));
    }
    return a.transpose(1, 2).reshape({B, T, -1});
  }

  // Multi-head latent attention (ArchConfig::mla), its output projection included. mla.cpp.
  Tensor mla_attention(const Tensor& x, size_t li, const AttnBatch& c);

  // run_block's operations on ATen tensors (values: no operation writes into its operands).
  struct AtenBlockOps {
    Impl& m;
    Tensor buf[4];
    AttnBatch batch;
    Tensor& at(BlockBuf b) { return buf[static_cast<int>(b)]; }
    void norm(BlockBuf d, BlockBuf s, const Tensor& w, const Tensor& b) {
      const Tensor in = at(s);
      at(d) = m.norm(in, w, b);
      debug::dump_norm(in, at(d));
    }
    void copy(BlockBuf d, BlockBuf s) { at(d) = at(s); }
    void attention(BlockBuf d, BlockBuf s, size_t li) {
      at(d) = m.self_attention(at(s), li, batch);
      debug::dump("attn_out", at(d));
    }
    void mlp(BlockBuf d, BlockBuf s, size_t li) {
      if (m.cfg.uses_moe(li)) {
        const std::vector<int64_t> rows = m.call_rows(batch);
        at(d) = m.moe(at(s), m.layers[li], &rows);
      } else {
        at(d) = m.mlp(at(s), m.layers[li]);
      }
      debug::dump("mlp_out", at(d));
    }
    void scale(BlockBuf d, double f) { at(d) = scaled(at(d), f); }
    void add(BlockBuf d, BlockBuf a, BlockBuf b) { at(d) = at(a) + at(b); }
    void add3(BlockBuf d, BlockBuf a, BlockBuf b, BlockBuf c) {
      at(d) = m.cfg.residual_added_first ? at(a) + at(b) + at(c) : at(a) + (at(b) + at(c));
    }
  };

  Tensor mlp(const Tensor& x, const Layer& L) const {
    if (cfg.gated_mlp) {
      Tensor gu = layer_linear(x, L.up_w, L.up_b);
      const int64_t I = cfg.intermediate_size;
      const Tensor a = act(gu.narrow(-1, 0, I)) * gu.narrow(-1, I, I);
      debug::dump("gate_up", gu);
      debug::dump("mlp_act", a);
      return layer_linear(a, L.down_w, L.down_b);
    }
    const Tensor a = act(layer_linear(x, L.up_w, L.up_b));
    debug::dump("mlp_act", a);
    return layer_linear(a, L.down_w, L.down_b);
  }

  // A mixture-of-experts MLP over x [..., hidden] as transformers' sparse MoE blocks compute it:
  // softmax router in float32, the top k experts of each token (renormalised when the family
  // does), each expert run once over the tokens routed to it, the outputs weighted and added
  // in expert order; a shared expert added on top (Qwen2-MoE). moe.cpp.
  // call_rows: per batch row of x [B, T, hidden], its reference call's length (row_call), which
  // picks the float32 router products' kernel (null: x is one call).
  Tensor moe(const Tensor& x, const Layer& L, const std::vector<int64_t>* call_rows) const;
  // The router's choice for rows h [N, hidden]: (weights [N, K], chosen experts [N, K] int64);
  // and the same from one row of router logits p [E] (overwritten) on the CPU scoring path.
  // moe_router.cpp.
  std::pair<Tensor, Tensor> route(const Tensor& h, const Layer& L,
                                  const std::vector<int64_t>* call_rows = nullptr) const;
  static void route_row(const MoeConfig& mc, float* p, const float* bias, int64_t* chosen,
                        float* weight);

  // Logits (model dtype, soft-capped) for hidden rows [N, hidden].
  Tensor logits(const Tensor& hidden_rows) const {
    Tensor x = cfg.final_norm ? norm(hidden_rows, final_w, final_b) : hidden_rows;
    debug::dump("final_norm", x);
    if (proj_out.defined()) x = linear_rounded(x, proj_out);
    Tensor lg = few_rows_linear(x, head_w, head_b);
    if (!lg.defined()) lg = linear_rounded(x, head_w, head_b);
    if (cfg.logits_divisor != 1.0)  // Granite logits_scaling
      lg = via_float(lg, [d = cfg.logits_divisor](const Tensor& t) { return t / d; });
    if (cfg.logit_scale != 1.0) lg = scaled(lg, cfg.logit_scale);  // Cohere
    if (cfg.final_softcap > 0.0) {
      const double cap = cfg.final_softcap;
      lg = via_float(lg, [cap](const Tensor& t) { return t / cap; });
      lg = scaled(via_float(lg, [](const Tensor& t) { return at::tanh(t); }), cap);
    }
    debug::dump("logits", lg);
    return lg;
  }
};

}  // namespace lmeval::hf

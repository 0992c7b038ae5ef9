// The batch-invariant float32 CPU forward pass, with prefix sharing: a batch is a stack of
// sequences; a sequence may continue another one (its parent), attending to the parent's keys
// and values computed in the same pass, so that a multiple-choice context is run once for all
// its continuations. Every number a row gets depends only on that row's own sequence: matrix
// products use kernels::matmul_nt (fixed reduction order), and norms, rotary tables,
// activations and softmaxes are per-row scalar loops (ATen's vectorised elementwise kernels
// send a batch-dependent subset of elements through a scalar tail with other rounding).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "models/hf/kernels.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// Elements of work below which a loop stays on one thread: a parallel region's fork and join
// cost more than a small model's rows (and much more on a loaded machine).
constexpr int64_t kParallelWork = int64_t{1} << 18;

float* fptr(const Tensor& t) { return t.data_ptr<float>(); }
const float* cfptr(const Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// y[r] = norm(x[r]) for `rows` rows of width n (rows `ld` floats apart).
void norm_rows(const ArchConfig& cfg, const float* x, int64_t ldx, float* y, int64_t ldy,
               int64_t rows, int64_t n, const float* w, const float* b) {
  at::parallel_for(0, rows, std::max<int64_t>(1, kParallelWork / std::max<int64_t>(n, 1)),
                   [&](int64_t r0, int64_t r1) {
                     std::vector<float> tmp(static_cast<size_t>(n));
                     for (int64_t r = r0; r < r1; ++r) {
                       const float* xr = x + r * ldx;
                       float* yr = y + r * ldy;
                       if (cfg.norm == NormKind::kLayerNorm) {
                         const float mean = kernels::sum(xr, n) / static_cast<float>(n);
                         for (int64_t i = 0; i < n; ++i) tmp[i] = (xr[i] - mean) * (xr[i] - mean);
                         const float var = kernels::sum(tmp.data(), n) / static_cast<float>(n);
                         const float inv = 1.0f / std::sqrt(var + static_cast<float>(cfg.norm_eps));
                         for (int64_t i = 0; i < n; ++i)
                           yr[i] = (xr[i] - mean) * inv * w[i] + (b ? b[i] : 0.0f);
                       } else {
                         const float var = kernels::dot(xr, xr, n) / static_cast<float>(n);
                         const float inv = 1.0f / std::sqrt(var + static_cast<float>(cfg.norm_eps));
                         if (cfg.norm_plus_one)
                           for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] * inv) * (w[i] + 1.0f);
                         else
                           for (int64_t i = 0; i < n; ++i) yr[i] = w[i] * (xr[i] * inv);
                       }
                     }
                   });
}

float activate(Activation a, float x) {
  switch (a) {
    case Activation::kSilu:
      return x / (1.0f + std::exp(-x));
    case Activation::kGeluTanh: {
      const float c = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
    }
    case Activation::kGeluExact:
      return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
  }
  return x;
}

// Log-softmax of one row of n logits; sums in double.
void log_softmax_row(const float* x, float* y, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i] - m));
  const float lse = static_cast<float>(std::log(s));
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
}

}  // namespace

const Transformer::Impl::RopeTable& Transformer::Impl::rope_table(int64_t variant,
                                                                  int64_t positions) {
  RopeTable& t = rope_tables[variant];
  if (positions <= t.rows) return t;
  const int64_t rd = cfg.rotary_dim, half = rd / 2;
  // The variant's frequencies: a length that selects it (dynamic NTK: the length is the variant).
  const int64_t length = cfg.rope == RopeType::kDynamic ? variant
                         : variant && cfg.rope == RopeType::kLongRope
                             ? cfg.rope_original_max_positions + 1
                             : 0;
  Tensor inv = inv_freq_for_length(length).to(at::kCPU).to(at::kFloat).contiguous();
  const float* f = inv.data_ptr<float>();
  const float scale = static_cast<float>(cfg.rope_attention_factor);
  // Whole multiples of 256 positions, each row computed from its position alone.
  const int64_t rows = (positions + 255) / 256 * 256;
  t.cos.resize(static_cast<size_t>(rows * rd));
  t.sin.resize(static_cast<size_t>(rows * rd));
  for (int64_t p = t.rows; p < rows; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const float a = static_cast<float>(p) * f[i];  // freqs = position * inv_freq in float32
      float c = std::cos(a), s = std::sin(a);
      if (scale != 1.0f) {
        c *= scale;
        s *= scale;
      }
      t.cos[p * rd + i] = t.cos[p * rd + half + i] = c;
      t.sin[p * rd + i] = t.sin[p * rd + half + i] = s;
    }
  t.rows = rows;
  return t;
}

Tensor Transformer::Impl::buffer(size_t slot, int64_t rows, int64_t cols) {
  if (workspace.size() <= slot) workspace.resize(slot + 1);
  Tensor& w = workspace[slot];
  if (!w.defined() || w.numel() < rows * cols)
    w = at::empty({rows * cols}, at::TensorOptions().dtype(at::kFloat));
  return w.narrow(0, 0, rows * cols).view({rows, cols});
}

Tensor Transformer::Impl::forward_invariant(const std::vector<Token>& ids,
                                            const std::vector<Seq>& seqs) {
  const int64_t N = static_cast<int64_t>(ids.size());
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, KV = cfg.num_kv_heads, hd = cfg.head_dim;
  const int64_t qdim = H * hd, ld_qkv = (H + 2 * KV) * hd, I = cfg.intermediate_size;
  // Position of each row and the length of the longest key sequence.
  std::vector<int64_t> pos(static_cast<size_t>(N), 0);
  int64_t max_pos = 0;
  // Each row's rotary table: the variant of its sequence's length (the caller does not share
  // prefixes when the variant depends on the length: rope.hpp).
  std::vector<int64_t> row_variant(static_cast<size_t>(N), 0);
  std::map<int64_t, int64_t> variant_rows;
  for (const Seq& s : seqs) {
    const int64_t p0 = s.parent >= 0 ? seqs[s.parent].len : 0;
    const int64_t v = rope_variant(cfg, p0 + s.len);
    for (int64_t t = 0; t < s.len; ++t) {
      pos[s.row0 + t] = p0 + t;
      row_variant[s.row0 + t] = v;
    }
    max_pos = std::max(max_pos, p0 + s.len);
    variant_rows[v] = std::max(variant_rows[v], p0 + s.len);
  }
  std::vector<const RopeTable*> row_table(static_cast<size_t>(N), nullptr);
  if (cfg.rope != RopeType::kNone) {
    for (const auto& [v, n] : variant_rows) rope_table(v, n);
    for (int64_t r = 0; r < N; ++r) row_table[r] = &rope_tables.at(row_variant[r]);
  }
  Tensor h = buffer(0, N, Hd), x = buffer(1, N, Hd), qkv = buffer(2, N, ld_qkv);
  Tensor att = buffer(3, N, qdim), o = buffer(4, N, Hd);
  Tensor up = buffer(5, N, cfg.gated_mlp ? 2 * I : I);
  Tensor m_out = buffer(6, N, Hd);
  {
    const float* e = fptr(embed);
    const float* pe = cfg.learned_positions ? fptr(pos_embed) : nullptr;
    const float scale = cfg.embed_scale ? embed_normalizer.item<float>() : 1.0f;
    float* hp = fptr(h);
    if (proj_in.defined()) {  // OPT: word embeddings of width E projected to the hidden size
      const int64_t E = cfg.embed_proj_dim;
      Tensor rows = buffer(7, N, E);
      for (int64_t r = 0; r < N; ++r)
        std::copy(e + static_cast<int64_t>(ids[r]) * E, e + (static_cast<int64_t>(ids[r]) + 1) * E,
                  fptr(rows) + r * E);
      kernels::matmul_nt(fptr(rows), E, fptr(proj_in), E, nullptr, hp, Hd, N, Hd, E);
    }
    for (int64_t r = 0; r < N; ++r) {
      const float* er = e + static_cast<int64_t>(ids[r]) * Hd;
      float* hr = hp + r * Hd;
      if (!proj_in.defined())
        for (int64_t i = 0; i < Hd; ++i) hr[i] = cfg.embed_scale ? er[i] * scale : er[i];
      if (pe) {
        const float* pr = pe + (pos[r] + cfg.position_offset) * Hd;
        for (int64_t i = 0; i < Hd; ++i) hr[i] += pr[i];
      }
    }
  }
  float* hp = fptr(h);
  float* xp = fptr(x);
  float* qp = fptr(qkv);
  float* ap = fptr(att);
  const int64_t rd = cfg.rotary_dim, half = rd / 2;
  for (size_t li = 0; li < layers.size(); ++li) {
    const Layer& L = layers[li];
    const int64_t window = cfg.layer_sliding_window[li];
    if (cfg.post_norm)
      std::copy(hp, hp + N * Hd, xp);
    else
      norm_rows(cfg, hp, Hd, xp, Hd, N, Hd, cfptr(L.ln1_w), cfptr(L.ln1_b));
    kernels::matmul_nt(xp, Hd, fptr(L.qkv_w), Hd, cfptr(L.qkv_b), qp, ld_qkv, N, ld_qkv, Hd);
    // Per head: q/k norm (Qwen3), then rotary embedding of q and k.
    at::parallel_for(0, N, std::max<int64_t>(1, kParallelWork / ld_qkv),
                     [&](int64_t r0, int64_t r1) {
                       std::vector<float> tmp(static_cast<size_t>(hd));
                       for (int64_t r = r0; r < r1; ++r) {
                         float* row = qp + r * ld_qkv;
                         for (int64_t hh = 0; hh < H + KV; ++hh) {
                           float* v = row + hh * hd;
                           if (cfg.qk_norm) {
                             std::copy(v, v + hd, tmp.begin());
                             norm_rows(cfg, tmp.data(), hd, v, hd, 1, hd,
                                       cfptr(hh < H ? L.q_norm_w : L.k_norm_w),
                                       cfptr(hh < H ? L.q_norm_b : L.k_norm_b));
                           }
                           if (cfg.rope == RopeType::kNone) continue;
                           const float* c = row_table[r]->cos.data() + pos[r] * rd;
                           const float* s = row_table[r]->sin.data() + pos[r] * rd;
                           for (int64_t i = 0; i < half; ++i) {
                             const float x1 = v[i], x2 = v[half + i];
                             v[i] = x1 * c[i] - x2 * s[i];
                             v[half + i] = x2 * c[half + i] + x1 * s[half + i];
                           }
                         }
                       }
                     });
    // Attention, one (sequence, query head) at a time.
    const int64_t rep = H / KV;
    const int64_t tasks = static_cast<int64_t>(seqs.size()) * H;
    const int64_t work = N * max_pos * hd * H;  // ~ multiply-adds of the layer's attention
    at::parallel_for(0, tasks, work < 16 * kParallelWork ? tasks : 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> kbuf, vt, scores;
      for (int64_t task = t0; task < t1; ++task) {
        const Seq& s = seqs[task / H];
        const int64_t head = task % H, g = head / rep;
        const int64_t plen = s.parent >= 0 ? seqs[s.parent].len : 0;
        const int64_t prow = s.parent >= 0 ? seqs[s.parent].row0 : 0;
        const int64_t S = plen + s.len;
        kbuf.resize(static_cast<size_t>(S * hd));
        vt.resize(static_cast<size_t>(hd * S));
        scores.resize(static_cast<size_t>(s.len * S));
        for (int64_t j = 0; j < S; ++j) {
          const int64_t r = j < plen ? prow + j : s.row0 + (j - plen);
          const float* k = qp + r * ld_qkv + qdim + g * hd;
          const float* v = qp + r * ld_qkv + qdim + KV * hd + g * hd;
          std::copy(k, k + hd, kbuf.begin() + j * hd);
          for (int64_t d = 0; d < hd; ++d) vt[d * S + j] = v[d];
        }
        kernels::matmul_nt(qp + s.row0 * ld_qkv + head * hd, ld_qkv, kbuf.data(), hd, nullptr,
                           scores.data(), S, s.len, S, hd);
        const float scale = static_cast<float>(cfg.attn_scale);
        const float cap = static_cast<float>(cfg.attn_softcap);
        for (int64_t t = 0; t < s.len; ++t) {
          float* row = scores.data() + t * S;
          const int64_t q = plen + t;  // the query's position = the index of its own key
          const int64_t lo = window > 0 ? std::max<int64_t>(0, q - window + 1) : 0;
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t j = lo; j <= q; ++j) {
            float v = row[j] * scale;
            if (cap > 0.0f) v = std::tanh(v / cap) * cap;
            row[j] = v;
            m = std::max(m, v);
          }
          float total = 0;
          for (int64_t j = lo; j <= q; ++j) {
            row[j] = std::exp(row[j] - m);
            total += row[j];
          }
          for (int64_t j = 0; j < lo; ++j) row[j] = 0.0f;
          for (int64_t j = lo; j <= q; ++j) row[j] /= total;
          for (int64_t j = q + 1; j < S; ++j) row[j] = 0.0f;
        }
        kernels::matmul_nt(scores.data(), S, vt.data(), S, nullptr, ap + s.row0 * qdim + head * hd,
                           qdim, s.len, hd, S);
      }
    });
    kernels::matmul_nt(ap, qdim, fptr(L.o_w), qdim, cfptr(L.o_b), fptr(o), Hd, N, Hd, qdim);
    if (cfg.sandwich_norms) {
      Tensor t = o.clone();
      norm_rows(cfg, fptr(t), Hd, fptr(o), Hd, N, Hd, cfptr(L.post_attn_w), nullptr);
    }
    auto mlp = [&](const float* in, float* out) {
      // The activation overwrites the gate half in place; the down projection reads it with
      // the row stride of the gate/up rows.
      float* u = fptr(up);
      const int64_t w = cfg.gated_mlp ? 2 * I : I;
      kernels::matmul_nt(in, Hd, fptr(L.up_w), Hd, cfptr(L.up_b), u, w, N, w, Hd);
      at::parallel_for(0, N, std::max<int64_t>(1, kParallelWork / I), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t i = 0; i < I; ++i)
            u[r * w + i] = cfg.gated_mlp ? activate(cfg.activation, u[r * w + i]) * u[r * w + I + i]
                                         : activate(cfg.activation, u[r * w + i]);
      });
      kernels::matmul_nt(u, w, fptr(L.down_w), I, cfptr(L.down_b), out, Hd, N, Hd, I);
    };
    float* op = fptr(o);
    float* mp = fptr(m_out);
    if (cfg.post_norm) {  // OPT do_layer_norm_before=false
      for (int64_t i = 0; i < N * Hd; ++i) xp[i] = hp[i] + op[i];
      norm_rows(cfg, xp, Hd, hp, Hd, N, Hd, cfptr(L.ln1_w), cfptr(L.ln1_b));
      mlp(hp, mp);
      for (int64_t i = 0; i < N * Hd; ++i) xp[i] = hp[i] + mp[i];
      norm_rows(cfg, xp, Hd, hp, Hd, N, Hd, cfptr(L.ln2_w), cfptr(L.ln2_b));
    } else if (cfg.parallel_residual) {
      if (cfg.shared_layer_norm) {
        mlp(xp, mp);
      } else {
        norm_rows(cfg, hp, Hd, xp, Hd, N, Hd, cfptr(L.ln2_w), cfptr(L.ln2_b));
        mlp(xp, mp);
      }
      for (int64_t i = 0; i < N * Hd; ++i) hp[i] = (hp[i] + op[i]) + mp[i];
    } else {
      for (int64_t i = 0; i < N * Hd; ++i) hp[i] += op[i];
      norm_rows(cfg, hp, Hd, xp, Hd, N, Hd, cfptr(L.ln2_w), cfptr(L.ln2_b));
      mlp(xp, mp);
      if (cfg.sandwich_norms) {
        std::copy(mp, mp + N * Hd, xp);
        norm_rows(cfg, xp, Hd, mp, Hd, N, Hd, cfptr(L.post_mlp_w), nullptr);
      }
      for (int64_t i = 0; i < N * Hd; ++i) hp[i] += mp[i];
    }
  }
  return h;
}

Tensor Transformer::Impl::logprobs_invariant(const Tensor& hidden_rows) {
  const int64_t n = hidden_rows.size(0), Hd = cfg.hidden_size, V = cfg.vocab_size;
  Tensor src = hidden_rows.contiguous();
  Tensor x = at::empty({n, Hd}, at::kFloat), lg = at::empty({n, V}, at::kFloat),
         lp = at::empty({n, V}, at::kFloat);
  if (cfg.final_norm)
    norm_rows(cfg, fptr(src), Hd, fptr(x), Hd, n, Hd, cfptr(final_w), cfptr(final_b));
  else
    x.copy_(src);
  int64_t E = Hd;
  if (proj_out.defined()) {  // OPT: back to the embeddings' width before the tied LM head
    E = cfg.embed_proj_dim;
    Tensor y = at::empty({n, E}, at::kFloat);
    kernels::matmul_nt(fptr(x), Hd, fptr(proj_out), Hd, nullptr, fptr(y), E, n, E, Hd);
    x = y;
  }
  kernels::matmul_nt(fptr(x), E, fptr(head_w), E, cfptr(head_b), fptr(lg), V, n, V, E);
  const float cap = static_cast<float>(cfg.final_softcap);
  float* l = fptr(lg);
  float* out = fptr(lp);
  at::parallel_for(0, n, std::max<int64_t>(1, kParallelWork / V), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (cap > 0.0f)
        for (int64_t v = 0; v < V; ++v) l[r * V + v] = std::tanh(l[r * V + v] / cap) * cap;
      log_softmax_row(l + r * V, out + r * V, V);
    }
  });
  return lp;
}

}  // namespace lmeval::hf

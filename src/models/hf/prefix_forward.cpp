// The batch-invariant float32 CPU forward pass, with prefix sharing: a batch is a stack of
// sequences; a sequence may continue another one (its parent), attending to the parent's keys
// and values computed in the same pass, so that a multiple-choice context is run once for all
// its continuations. Every number a row gets depends only on that row's own sequence: matrix
// products use kernels::matmul_nt and kernels::matmul_nn_acc (fixed reduction order), softmaxes
// kernels::exp_shifted (one polynomial for every element), and norms, rotary tables and
// activations are per-row scalar loops (ATen's vectorised elementwise kernels send a
// batch-dependent subset of elements through a scalar tail with other rounding).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "models/hf/block.hpp"
#include "models/hf/kernels.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// Elements of work below which a loop stays on one thread: a parallel region's fork and join
// cost more than a small model's rows (and much more on a loaded machine).
constexpr int64_t kParallelWork = int64_t{1} << 18;

// Queries per attention task: the block's score rows (kQueryBlock x keys) stay in L2.
constexpr int64_t kQueryBlock = 64;

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

// run_block's operations on float rows [N, width] (buffers of forward_invariant). A norm onto
// its own buffer goes through `scratch`: norm_rows reads a row while writing it otherwise.
template <class Attention, class Mlp>
struct RowBlockOps {
  const ArchConfig& cfg;
  int64_t rows, width;
  float* buf[4];
  float* scratch;
  Attention& attend;
  Mlp& mlp_rows;
  float* at(BlockBuf b) const { return buf[static_cast<int>(b)]; }
  void norm(BlockBuf d, BlockBuf s, const Tensor& w, const Tensor& b) const {
    const float* src = at(s);
    if (d == s) src = std::copy(at(s), at(s) + rows * width, scratch) - rows * width;
    norm_rows(cfg, src, width, at(d), width, rows, width, cfptr(w), cfptr(b));
  }
  void copy(BlockBuf d, BlockBuf s) const { std::copy(at(s), at(s) + rows * width, at(d)); }
  void attention(BlockBuf d, BlockBuf s, size_t li) const { attend(at(s), at(d), li); }
  void mlp(BlockBuf d, BlockBuf s, size_t li) const { mlp_rows(at(s), at(d), li); }
  void add(BlockBuf d, BlockBuf a, BlockBuf b) const {
    float* dp = at(d);
    const float *ap = at(a), *bp = at(b);
    for (int64_t i = 0; i < rows * width; ++i) dp[i] = ap[i] + bp[i];
  }
  void add3(BlockBuf d, BlockBuf a, BlockBuf b, BlockBuf c) const {
    float* dp = at(d);
    const float *ap = at(a), *bp = at(b), *cp = at(c);
    for (int64_t i = 0; i < rows * width; ++i) dp[i] = (ap[i] + bp[i]) + cp[i];
  }
  void scale(BlockBuf d, double f) const {
    float* dp = at(d);
    const float s = static_cast<float>(f);
    for (int64_t i = 0; i < rows * width; ++i) dp[i] *= s;
  }
};

// Log-softmax of one row of n logits, in place; the exponentials (kernels::exp_shifted, into
// tmp) are summed in double, four fixed lanes.
void log_softmax_row(float* x, int64_t n, std::vector<float>& tmp) {
  const float m = kernels::max(x, n);
  tmp.assign(x, x + n);
  kernels::exp_shifted(tmp.data(), n, m);
  double lanes[4] = {};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) lanes[l] += tmp[i + l];
  for (int l = 0; i + l < n; ++l) lanes[l] += tmp[i + l];
  const float lse = static_cast<float>(std::log((lanes[0] + lanes[2]) + (lanes[1] + lanes[3])));
  for (int64_t j = 0; j < n; ++j) x[j] = (x[j] - m) - lse;
}

}  // namespace

const Transformer::Impl::RopeTable& Transformer::Impl::rope_table(int64_t variant,
                                                                  int64_t positions) {
  RopeTable& t = rope_tables[variant];
  if (positions <= t.rows) return t;
  const int64_t rd = cfg.rotary_dim, half = rd / 2;
  // The variant's frequencies: a length that selects it (dynamic NTK: the length is the variant).
  const int64_t length = variant == kLocalRopeVariant     ? variant
                         : cfg.rope == RopeType::kDynamic ? variant
                         : variant && cfg.rope == RopeType::kLongRope
                             ? cfg.rope_original_max_positions + 1
                             : 0;
  Tensor inv = inv_freq_for_length(length).to(at::kCPU).to(at::kFloat).contiguous();
  const float* f = inv.data_ptr<float>();
  const float scale =
      variant == kLocalRopeVariant ? 1.0f : static_cast<float>(cfg.rope_attention_factor);
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

void Transformer::Impl::moe_rows(const float* in, float* out, int64_t N, const Layer& L) {
  const MoeConfig& mc = cfg.moe;
  const int64_t Hd = cfg.hidden_size, E = mc.num_experts, K = mc.top_k;
  const int64_t I = mc.expert_intermediate;
  // Router: the top k experts of each row and their weights (moe_router.cpp).
  float* logits = fptr(buffer(11, N, E));
  kernels::matmul_nt(in, Hd, fptr(L.router_w), Hd, cfptr(L.router_b), logits, E, N, E, Hd);
  std::vector<int64_t> chosen(static_cast<size_t>(N * K));
  std::vector<float> weight(static_cast<size_t>(N * K));
  for (int64_t r = 0; r < N; ++r)
    route_row(mc, logits + r * E, cfptr(L.router_bias), chosen.data() + r * K,
              weight.data() + r * K);
  std::fill(out, out + N * Hd, 0.0f);
  // Each expert over the rows routed to it, gathered in row order; its weighted outputs are
  // added in expert order, as transformers' index_add_ loop does.
  float* x = fptr(buffer(12, N, Hd));
  float* gu = fptr(buffer(13, N, 2 * std::max(I, mc.shared_intermediate)));
  float* y = fptr(buffer(14, N, Hd));
  std::vector<int64_t> rows;
  std::vector<float> row_weight;
  const float limit = static_cast<float>(mc.swiglu_limit);
  const float alpha = static_cast<float>(mc.swiglu_alpha);
  auto expert = [&](const float* up_w, const float* up_b, const float* down_w, const float* down_b,
                    int64_t width, int64_t n) {
    kernels::matmul_nt(x, Hd, up_w, Hd, up_b, gu, 2 * width, n, 2 * width, Hd);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < width; ++i) {
        float& g = gu[r * 2 * width + i];
        const float u = gu[r * 2 * width + width + i];
        if (limit > 0.0f) {  // GptOssExperts._apply_gate
          const float gc = std::min(g, limit);
          const float uc = std::clamp(u, -limit, limit);
          g = (uc + 1.0f) * (gc * (1.0f / (1.0f + std::exp(-(gc * alpha)))));
        } else {
          g = activate(cfg.activation, g) * u;
        }
      }
    kernels::matmul_nt(gu, 2 * width, down_w, width, down_b, y, Hd, n, Hd, width);
  };
  for (int64_t e = 0; e < E; ++e) {
    rows.clear();
    row_weight.clear();
    for (int64_t r = 0; r < N; ++r)
      for (int64_t k = 0; k < K; ++k)
        if (chosen[r * K + k] == e) {
          rows.push_back(r);
          row_weight.push_back(weight[r * K + k]);
        }
    if (rows.empty()) continue;
    const int64_t n = static_cast<int64_t>(rows.size());
    // Llama 4: the weight scales the expert's input, not its output.
    const bool scaled_input = mc.router == MoeRouter::kLlama4;
    for (int64_t i = 0; i < n; ++i) {
      std::copy(in + rows[i] * Hd, in + (rows[i] + 1) * Hd, x + i * Hd);
      if (scaled_input)
        for (int64_t d = 0; d < Hd; ++d) x[i * Hd + d] *= row_weight[i];
    }
    const float* up_b = cfptr(L.experts_up_b);
    const float* down_b = cfptr(L.experts_down_b);
    expert(fptr(L.experts_up) + e * 2 * I * Hd, up_b ? up_b + e * 2 * I : nullptr,
           fptr(L.experts_down) + e * Hd * I, down_b ? down_b + e * Hd : nullptr, I, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t d = 0; d < Hd; ++d)
        out[rows[i] * Hd + d] += scaled_input ? y[i * Hd + d] : y[i * Hd + d] * row_weight[i];
  }
  if (mc.shared_intermediate > 0) {  // Qwen2-MoE: a shared expert, gated by a sigmoid
    std::copy(in, in + N * Hd, x);
    expert(fptr(L.up_w), nullptr, fptr(L.down_w), nullptr, mc.shared_intermediate, N);
    std::vector<float> gate(static_cast<size_t>(N), 1.0f);
    if (L.shared_gate_w.defined()) {
      kernels::matmul_nt(in, Hd, fptr(L.shared_gate_w), Hd, nullptr, gate.data(), 1, N, 1, Hd);
      for (auto& g : gate) g = 1.0f / (1.0f + std::exp(-g));
    }
    for (int64_t r = 0; r < N; ++r)
      for (int64_t d = 0; d < Hd; ++d) out[r * Hd + d] += gate[r] * y[r * Hd + d];
  }
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
  const RopeTable* local_table = cfg.rope != RopeType::kNone && cfg.rope_local_theta > 0.0
                                     ? &rope_table(kLocalRopeVariant, max_pos)
                                     : nullptr;
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
      if (cfg.embedding_multiplier != 1.0) {
        const float m = static_cast<float>(cfg.embedding_multiplier);
        for (int64_t i = 0; i < Hd; ++i) hr[i] *= m;
      }
      if (pe) {
        const float* pr = pe + (pos[r] + cfg.position_offset) * Hd;
        for (int64_t i = 0; i < Hd; ++i) hr[i] += pr[i];
      }
    }
  }
  float* hp = fptr(h);
  float* xp = fptr(x);
  float* qp = fptr(qkv);
  if (cfg.embed_norm) {  // BLOOM word_embeddings_layernorm
    std::copy(hp, hp + N * Hd, xp);
    norm_rows(cfg, xp, Hd, hp, Hd, N, Hd, cfptr(embed_norm_w), cfptr(embed_norm_b));
  }
  float* ap = fptr(att);
  const int64_t rd = cfg.rotary_dim, half = rd / 2;
  // Layer li's attention over the rows of `in`, its output projection into `out`.
  auto attention = [&](const float* in, float* out, size_t li) {
    const Layer& L = layers[li];
    const int64_t window = cfg.layer_sliding_window[li], chunk = cfg.attention_chunk(li);
    if (cfg.mla.enabled())  // rotary embedding included
      mla_rows(in, qp, N, L, pos.data(), row_table.data());
    else
      kernels::matmul_nt(in, Hd, fptr(L.qkv_w), Hd, cfptr(L.qkv_b), qp, ld_qkv, N, ld_qkv, Hd);
    const bool rope = cfg.uses_rope(li) && !cfg.mla.enabled(), local = cfg.uses_local_rope(li);
    // q/k norm (per head: Qwen3; over all heads: OLMo2), then rotary embedding of q and k.
    at::parallel_for(
        0, N, std::max<int64_t>(1, kParallelWork / ld_qkv), [&](int64_t r0, int64_t r1) {
          std::vector<float> tmp(static_cast<size_t>(std::max(hd, qdim)));
          for (int64_t r = r0; r < r1; ++r) {
            float* row = qp + r * ld_qkv;
            if (cfg.qk_norm == QkNorm::kWhole) {
              std::copy(row, row + qdim, tmp.begin());
              norm_rows(cfg, tmp.data(), qdim, row, qdim, 1, qdim, cfptr(L.q_norm_w),
                        cfptr(L.q_norm_b));
              std::copy(row + qdim, row + qdim + KV * hd, tmp.begin());
              norm_rows(cfg, tmp.data(), KV * hd, row + qdim, KV * hd, 1, KV * hd,
                        cfptr(L.k_norm_w), cfptr(L.k_norm_b));
            }
            if (cfg.clip_qkv > 0.0) {
              const float c = static_cast<float>(cfg.clip_qkv);
              for (int64_t i = 0; i < ld_qkv; ++i) row[i] = std::clamp(row[i], -c, c);
            }
            for (int64_t hh = 0; hh < H + KV; ++hh) {
              float* v = row + hh * hd;
              if (cfg.qk_norm == QkNorm::kPerHead || cfg.qk_norm == QkNorm::kPerHeadWeights) {
                // kPerHeadWeights: head hh's own row of the [heads, hd] weights.
                const int64_t off =
                    cfg.qk_norm == QkNorm::kPerHeadWeights ? (hh < H ? hh : hh - H) * hd : 0;
                const float* nb = cfptr(hh < H ? L.q_norm_b : L.k_norm_b);
                std::copy(v, v + hd, tmp.begin());
                norm_rows(cfg, tmp.data(), hd, v, hd, 1, hd,
                          cfptr(hh < H ? L.q_norm_w : L.k_norm_w) + off, nb ? nb + off : nullptr);
              }
              if (!rope) {
                if (cfg.attn_floor_scale > 0.0 && hh < H) {  // Llama 4's NoPE query temperature
                  const float t = std::log1p(std::floor((static_cast<float>(pos[r]) + 1.0f) /
                                                        static_cast<float>(cfg.attn_floor_scale))) *
                                      static_cast<float>(cfg.attn_temperature_scale) +
                                  1.0f;
                  for (int64_t i = 0; i < hd; ++i) v[i] *= t;
                }
                continue;
              }
              const RopeTable* tab = local ? local_table : row_table[r];
              const float* c = tab->cos.data() + pos[r] * rd;
              const float* s = tab->sin.data() + pos[r] * rd;
              rotate_head(v, c, s, half, cfg.rope_interleaved);
            }
            if (cfg.qk_norm == QkNorm::kL2AfterRope && rope)  // Llama 4: each rotated q, k head
              for (int64_t hh = 0; hh < H + KV; ++hh) {
                float* v = row + hh * hd;
                const float inv = 1.0f / std::sqrt(kernels::dot(v, v, hd) / static_cast<float>(hd) +
                                                   static_cast<float>(cfg.norm_eps));
                for (int64_t i = 0; i < hd; ++i) v[i] *= inv;
              }
          }
        });
    // Attention in blocks of kQueryBlock queries of one (sequence, head): scores against the
    // keys up to the block's last query only (Q times the transposed keys), softmax per row,
    // then P times V. Every product is a matmul_nn_acc chain over the key (or head) dimension
    // in increasing order, and masked probabilities are exact zeros, so a row's numbers do not
    // depend on the blocks, its batch or prefix sharing.
    {
      const int64_t rep = H / KV;
      // Keys transposed and values gathered, per sequence's own rows and key/value head
      // (contiguous operands for the products below):
      // kt[row0 * KV * hd + (g * hd + d) * len + t], vc[row0 * KV * hd + (g * len + t) * hd + d].
      float* kt = fptr(buffer(8, N, KV * hd));
      float* vc = fptr(buffer(9, N, KV * hd));
      const int64_t per_task = N / static_cast<int64_t>(seqs.size()) * hd;
      at::parallel_for(0, static_cast<int64_t>(seqs.size()) * KV,
                       std::max<int64_t>(1, kParallelWork / std::max<int64_t>(per_task, 1)),
                       [&](int64_t t0, int64_t t1) {
                         for (int64_t task = t0; task < t1; ++task) {
                           const Seq& s = seqs[task / KV];
                           const int64_t g = task % KV;
                           float* kd = kt + s.row0 * KV * hd + g * hd * s.len;
                           float* vd = vc + s.row0 * KV * hd + g * hd * s.len;
                           for (int64_t t = 0; t < s.len; ++t) {
                             const float* k = qp + (s.row0 + t) * ld_qkv + qdim + g * hd;
                             for (int64_t d = 0; d < hd; ++d) kd[d * s.len + t] = k[d];
                             std::copy(k + KV * hd, k + KV * hd + hd, vd + t * hd);
                           }
                         }
                       });
      // Tasks: (sequence, head, query block), sequences' blocks in order.
      std::vector<int64_t> task0(seqs.size() + 1, 0);
      for (size_t i = 0; i < seqs.size(); ++i)
        task0[i + 1] = task0[i] + H * ((seqs[i].len + kQueryBlock - 1) / kQueryBlock);
      const int64_t tasks = task0.back();
      const int64_t work = N * max_pos * hd * H;  // ~ multiply-adds of the layer's attention
      const float scale = static_cast<float>(cfg.attn_scale);
      const float cap = static_cast<float>(cfg.attn_softcap);
      const float* sinks = cfptr(L.sinks);
      at::parallel_for(
          0, tasks, work < 16 * kParallelWork ? tasks : 1, [&](int64_t t0, int64_t t1) {
            std::vector<float> scores;
            size_t si = std::upper_bound(task0.begin(), task0.end(), t0) - task0.begin() - 1;
            for (int64_t task = t0; task < t1; ++task) {
              while (task >= task0[si + 1]) ++si;
              const Seq& s = seqs[si];
              const int64_t blocks = (s.len + kQueryBlock - 1) / kQueryBlock;
              const int64_t head = (task - task0[si]) / blocks, g = head / rep;
              const int64_t b0 = (task - task0[si]) % blocks * kQueryBlock;
              const int64_t b1 = std::min(s.len, b0 + kQueryBlock), qb = b1 - b0;
              const Seq* par = s.parent >= 0 ? &seqs[s.parent] : nullptr;
              const int64_t plen = par ? par->len : 0;
              const int64_t S = plen + b1;  // keys up to the block's last query
              // The first key any query of the block sees (sliding window); earlier probabilities
              // are zeros, which leave a chain exactly as it was.
              int64_t first = window > 0 ? std::max<int64_t>(0, plen + b0 - window + 1) : 0;
              if (chunk > 0) first = (plen + b0) / chunk * chunk;  // the first query's chunk
              scores.assign(static_cast<size_t>(qb * S), 0.0f);
              const float* q = qp + (s.row0 + b0) * ld_qkv + head * hd;
              if (par && first < plen)
                kernels::matmul_nn_acc(q, ld_qkv, kt + par->row0 * KV * hd + g * hd * plen + first,
                                       plen, scores.data() + first, S, qb, plen - first, hd);
              const int64_t own0 = std::max<int64_t>(first, plen);
              kernels::matmul_nn_acc(q, ld_qkv,
                                     kt + s.row0 * KV * hd + g * hd * s.len + (own0 - plen), s.len,
                                     scores.data() + own0, S, qb, S - own0, hd);
              for (int64_t t = 0; t < qb; ++t) {
                float* row = scores.data() + t * S;
                const int64_t qpos = plen + b0 + t;  // the query's position = its own key's index
                int64_t lo = window > 0 ? std::max<int64_t>(0, qpos - window + 1) : 0;
                if (chunk > 0) lo = qpos / chunk * chunk;
                const int64_t n = qpos + 1 - lo;
                float* r = row + lo;
                for (int64_t j = 0; j < n; ++j) r[j] *= scale;
                if (cap > 0.0f)
                  for (int64_t j = 0; j < n; ++j) r[j] = std::tanh(r[j] / cap) * cap;
                if (cfg.alibi != Alibi::kNone) {
                  // Key j sits at position lo + j; MPT's bias counts from the sequence's last key.
                  const int64_t last = plen + s.len - 1;
                  for (int64_t j = 0; j < n; ++j) r[j] += alibi_bias(cfg, head, lo + j, last);
                }
                float m = kernels::max(r, n);
                float sink = 0.0f;
                if (sinks) {  // GPT-OSS: the head's sink joins the softmax's denominator
                  sink = sinks[head];
                  m = std::max(m, sink);
                }
                kernels::exp_shifted(r, n, m);
                float total = kernels::sum(r, n);
                if (sinks) {
                  kernels::exp_shifted(&sink, 1, m);
                  total += sink;
                }
                for (int64_t j = 0; j < n; ++j) r[j] /= total;
                std::fill(row, r, 0.0f);
                std::fill(row + qpos + 1, row + S, 0.0f);
              }
              float* out = ap + (s.row0 + b0) * qdim + head * hd;
              for (int64_t t = 0; t < qb; ++t) std::fill(out + t * qdim, out + t * qdim + hd, 0.0f);
              if (par && first < plen)
                kernels::matmul_nn_acc(scores.data() + first, S,
                                       vc + par->row0 * KV * hd + (g * plen + first) * hd, hd, out,
                                       qdim, qb, hd, plen - first);
              kernels::matmul_nn_acc(scores.data() + own0, S,
                                     vc + s.row0 * KV * hd + (g * s.len + own0 - plen) * hd, hd,
                                     out, qdim, qb, hd, S - own0);
            }
          });
    }
    const int64_t odim = cfg.mla.enabled() ? mla_compact(ap, N) : qdim;
    kernels::matmul_nt(ap, odim, fptr(L.o_w), odim, cfptr(L.o_b), out, Hd, N, Hd, odim);
  };
  auto mlp = [&](const float* in, float* out, size_t li) {
    const Layer& L = layers[li];
    if (cfg.uses_moe(li)) {
      moe_rows(in, out, N, L);
      return;
    }
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
  RowBlockOps<decltype(attention), decltype(mlp)> ops{
      cfg, N, Hd, {hp, xp, fptr(o), fptr(m_out)}, fptr(buffer(10, N, Hd)), attention, mlp};
  for (size_t li = 0; li < layers.size(); ++li) run_block(cfg, layers[li], li, ops);

  return h;
}

Tensor Transformer::Impl::logprobs_invariant(const Tensor& hidden_rows) {
  const int64_t n = hidden_rows.size(0), Hd = cfg.hidden_size, V = cfg.vocab_size;
  Tensor src = hidden_rows.contiguous();
  Tensor x = at::empty({n, Hd}, at::kFloat), lg = at::empty({n, V}, at::kFloat);
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
  const float divisor = static_cast<float>(cfg.logits_divisor);
  const float logit_scale = static_cast<float>(cfg.logit_scale);
  float* l = fptr(lg);
  at::parallel_for(0, n, std::max<int64_t>(1, kParallelWork / V), [&](int64_t r0, int64_t r1) {
    std::vector<float> tmp;
    for (int64_t r = r0; r < r1; ++r) {
      if (divisor != 1.0f)
        for (int64_t v = 0; v < V; ++v) l[r * V + v] /= divisor;
      if (logit_scale != 1.0f)
        for (int64_t v = 0; v < V; ++v) l[r * V + v] *= logit_scale;
      if (cap > 0.0f)
        for (int64_t v = 0; v < V; ++v) l[r * V + v] = std::tanh(l[r * V + v] / cap) * cap;
      log_softmax_row(l + r * V, V, tmp);
    }
  });
  return lg;  // the logits, turned into log-probabilities in place
}

}  // namespace lmeval::hf

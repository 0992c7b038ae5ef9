// Multi-head latent attention (DeepSeek-V2/V3, ArchConfig::mla) in both forward passes: the
// queries, keys and values as transformers' DeepseekV2Attention / DeepseekV3Attention compute
// them, handed to the shared attention (Impl::attend_heads on the device path, the blocked
// attention of forward_invariant on the CPU scoring path).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "models/hf/kernels.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// DeepseekV2RMSNorm over the last dimension, with the eps of q_a_layernorm / kv_a_layernorm.
Tensor lora_norm(const Tensor& x, const Tensor& w, double eps) {
  Tensor xf = x.to(at::kFloat);
  xf = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps);
  return w * xf.to(x.scalar_type());
}

// The same norm over one row of n floats, in place (norm_rows' RMS arithmetic).
void lora_norm_row(float* x, int64_t n, const float* w, double eps) {
  const float var = kernels::dot(x, x, n) / static_cast<float>(n);
  const float inv = 1.0f / std::sqrt(var + static_cast<float>(eps));
  for (int64_t i = 0; i < n; ++i) x[i] = w[i] * (x[i] * inv);
}

float* fp(const Tensor& t) { return t.data_ptr<float>(); }
const float* cfp(const Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

}  // namespace

Tensor Transformer::Impl::mla_attention(const Tensor& x, size_t li, const AttnBatch& c) {
  const Layer& L = layers[li];
  const MlaConfig& a = cfg.mla;
  const int64_t B = c.B, T = c.T, H = cfg.num_heads;
  const int64_t nope = a.qk_nope_head_dim, rope = a.qk_rope_head_dim, vd = a.v_head_dim;
  const int64_t r = a.kv_lora_rank;
  Tensor q = a.q_lora_rank > 0 ? linear_rounded(lora_norm(linear_rounded(x, L.q_a_w, L.q_a_b),
                                                          L.q_a_norm_w, a.lora_norm_eps),
                                                L.q_b_w)
                               : linear_rounded(x, L.qkv_w);
  q = q.view({B, T, H, nope + rope}).transpose(1, 2);
  Tensor ckv = linear_rounded(x, L.kv_a_w, L.kv_a_b);
  Tensor latent = lora_norm(ckv.narrow(-1, 0, r), L.kv_a_norm_w, a.lora_norm_eps);
  Tensor q_rot = q.narrow(-1, nope, rope);
  Tensor k_rot = ckv.narrow(-1, r, rope).unsqueeze(1);  // [B, 1, T, rope]: one for all heads
  if (c.cos.defined()) {
    // V2's complex product and V3's rope_interleave both rotate pairs (2i, 2i+1); V3 writes the
    // rotated pairs de-interleaved, the same permutation of q and k, so every q·k is the same.
    const bool polar = cfg.rope_polar && x.is_cpu();  // V2's apply_rotary_emb
    q_rot = polar ? polar_rope(q_rot, c, false) : apply_rope(q_rot, c.cos, c.sin);
    k_rot = polar ? polar_rope(k_rot, c, false) : apply_rope(k_rot, c.cos, c.sin);
  }
  // DeepseekV2Attention.expand_kv: per head [k_nope; v] rows of kv_b_proj over the latent.
  Tensor kv = linear_rounded(latent, L.kv_b_w).view({B, T, H, nope + vd}).transpose(1, 2);
  Tensor k = at::cat({kv.narrow(-1, 0, nope), k_rot.expand({B, H, T, rope})}, -1);
  q = at::cat({q.narrow(-1, 0, nope), q_rot}, -1);
  const Tensor heads = attend_heads(q, k, kv.narrow(-1, nope, vd), li, c);
  debug::dump("attn", heads);
  return linear_rounded(heads, L.o_w, L.o_b);
}

void Transformer::Impl::mla_rows(const float* in, float* qkv, int64_t N, const Layer& L,
                                 const int64_t* pos, const RopeTable* const* tables) {
  const MlaConfig& a = cfg.mla;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, D = cfg.head_dim;
  const int64_t nope = a.qk_nope_head_dim, rope = a.qk_rope_head_dim, vd = a.v_head_dim;
  const int64_t qk = nope + rope, r = a.kv_lora_rank, qr = a.q_lora_rank;
  const int64_t ld = 3 * H * D, kvw = nope + vd;
  float* q = fp(buffer(20, N, H * qk));
  if (qr > 0) {
    float* qa = fp(buffer(21, N, qr));
    kernels::matmul_nt(in, Hd, fp(L.q_a_w), Hd, cfp(L.q_a_b), qa, qr, N, qr, Hd);
    for (int64_t i = 0; i < N; ++i)
      lora_norm_row(qa + i * qr, qr, fp(L.q_a_norm_w), a.lora_norm_eps);
    kernels::matmul_nt(qa, qr, fp(L.q_b_w), qr, nullptr, q, H * qk, N, H * qk, qr);
  } else {
    kernels::matmul_nt(in, Hd, fp(L.qkv_w), Hd, nullptr, q, H * qk, N, H * qk, Hd);
  }
  float* ckv = fp(buffer(22, N, r + rope));
  kernels::matmul_nt(in, Hd, fp(L.kv_a_w), Hd, cfp(L.kv_a_b), ckv, r + rope, N, r + rope, Hd);
  for (int64_t i = 0; i < N; ++i)
    lora_norm_row(ckv + i * (r + rope), r, fp(L.kv_a_norm_w), a.lora_norm_eps);
  float* kv = fp(buffer(23, N, H * kvw));
  kernels::matmul_nt(ckv, r + rope, fp(L.kv_b_w), r, nullptr, kv, H * kvw, N, H * kvw, r);
  const int64_t half = rope / 2;
  // Pairs (2i, 2i+1) by frequency i (mla_attention says why), else rotate_half's (i, i + d/2).
  auto rotate = [&](float* v, const float* cs, const float* sn) {
    rotate_head(v, cs, sn, half, cfg.rope_interleaved);
  };
  at::parallel_for(0, N, std::max<int64_t>(1, (int64_t{1} << 18) / ld),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t i = r0; i < r1; ++i) {
                       float* row = qkv + i * ld;
                       std::fill(row, row + ld, 0.0f);  // the padding beyond each head's own width
                       float* k_rot = ckv + i * (r + rope) + r;
                       const bool rotary = cfg.rope != RopeType::kNone;
                       const float* cs = rotary ? tables[i]->cos.data() + pos[i] * rope : nullptr;
                       const float* sn = rotary ? tables[i]->sin.data() + pos[i] * rope : nullptr;
                       if (rotary) rotate(k_rot, cs, sn);
                       for (int64_t h = 0; h < H; ++h) {
                         float* qh = row + h * D;
                         std::copy(q + i * H * qk + h * qk, q + i * H * qk + (h + 1) * qk, qh);
                         if (rotary) rotate(qh + nope, cs, sn);
                         const float* kvh = kv + i * H * kvw + h * kvw;
                         float* kh = row + H * D + h * D;
                         std::copy(kvh, kvh + nope, kh);
                         std::copy(k_rot, k_rot + rope, kh + nope);
                         std::copy(kvh + nope, kvh + kvw, row + 2 * H * D + h * D);
                       }
                     }
                   });
}

int64_t Transformer::Impl::mla_compact(float* att, int64_t N) const {
  const int64_t H = cfg.num_heads, D = cfg.head_dim, vd = cfg.mla.v_head_dim;
  // Forward, in row and head order: each destination lies at or before its source.
  for (int64_t i = 0; i < N; ++i)
    for (int64_t h = 0; h < H; ++h) {
      const float* src = att + i * H * D + h * D;
      std::copy(src, src + vd, att + i * H * vd + h * vd);
    }
  return H * vd;
}

}  // namespace lmeval::hf

#include "models/hf/decode_attention.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>

namespace lmeval::hf {
namespace {

__attribute__((target("avx2,fma"))) inline float lanes_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// Scores of the query heads [h0, h0 + rep) of row b over its keys into rows of `scores` ([B*H,
// S], -inf outside first..last). A score is one fused multiply-add chain over the head's
// dimensions in 8 lanes, then the lanes' sum; four keys run side by side (independent chains,
// so the chains' latency overlaps) and each key is read once for all rep heads.
__attribute__((target("avx2,fma"))) void score_rows(const float* q, const float* keys,
                                                    int64_t key_stride, int64_t qk, int64_t rep,
                                                    int64_t first, int64_t last, float scale,
                                                    float* scores, int64_t S) {
  int64_t t = first;
  for (; t + 4 <= last + 1; t += 4) {
    const float* k0 = keys + t * key_stride;
    for (int64_t r = 0; r < rep; ++r) {
      const float* qr = q + r * qk;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t d = 0; d < qk; d += 8) {
        const __m256 qv = _mm256_loadu_ps(qr + d);
        a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + d), a0);
        a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + key_stride + d), a1);
        a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 2 * key_stride + d), a2);
        a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 3 * key_stride + d), a3);
      }
      float* row = scores + r * S + t;
      row[0] = lanes_sum(a0) * scale;
      row[1] = lanes_sum(a1) * scale;
      row[2] = lanes_sum(a2) * scale;
      row[3] = lanes_sum(a3) * scale;
    }
  }
  for (; t <= last; ++t) {
    const float* kr = keys + t * key_stride;
    for (int64_t r = 0; r < rep; ++r) {
      const float* qr = q + r * qk;
      __m256 acc = _mm256_setzero_ps();
      for (int64_t d = 0; d < qk; d += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d), _mm256_loadu_ps(kr + d), acc);
      scores[r * S + t] = lanes_sum(acc) * scale;
    }
  }
}

// out[r] = sum over t of p[r][t] * values[t] for the rep query heads of one key/value head: per
// output element one fused multiply-add chain over t in increasing order. One pass over the
// values per 64 of their dimensions (eight accumulators), so a value row is read once, not once
// per 8 dimensions.
template <int NV>
__attribute__((target("avx2,fma"))) void weigh_chunk(const float* pr, const float* values,
                                                     int64_t value_stride, int64_t first,
                                                     int64_t last, float* out) {
  __m256 acc[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc[v] = _mm256_setzero_ps();
  for (int64_t t = first; t <= last; ++t) {
    const __m256 pt = _mm256_set1_ps(pr[t]);
    const float* vr = values + t * value_stride;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vr + 8 * v), acc[v]);
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out + 8 * v, acc[v]);
}

__attribute__((target("avx2,fma"))) void weigh_values(const float* p, int64_t S,
                                                      const float* values, int64_t value_stride,
                                                      int64_t vd, int64_t rep, int64_t first,
                                                      int64_t last, float* out) {
  using Chunk = void (*)(const float*, const float*, int64_t, int64_t, int64_t, float*);
  static constexpr Chunk chunks[8] = {weigh_chunk<1>, weigh_chunk<2>, weigh_chunk<3>,
                                      weigh_chunk<4>, weigh_chunk<5>, weigh_chunk<6>,
                                      weigh_chunk<7>, weigh_chunk<8>};
  for (int64_t r = 0; r < rep; ++r)
    for (int64_t d = 0; d < vd; d += 64) {
      const int64_t nv = std::min<int64_t>(8, (vd - d) / 8);
      chunks[nv - 1](p + r * S, values + d, value_stride, first, last, out + r * vd + d);
    }
}

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace

#else  // no AVX2 kernels on other processors: the general path runs

namespace lmeval::hf {
namespace {
bool cpu_has_avx2_fma() { return false; }
void score_rows(const float*, const float*, int64_t, int64_t, int64_t, int64_t, int64_t, float,
                float*, int64_t) {}
void weigh_values(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t, int64_t,
                  float*) {}
}  // namespace
#endif

at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const std::vector<int64_t>& first, const std::vector<int64_t>& last,
                            double scale) {
  const int64_t B = q.size(0), H = q.size(1), KV = k.size(1), S = k.size(2);
  const int64_t qk = q.size(-1), vd = v.size(-1);
  if (!cpu_has_avx2_fma() || q.is_cuda() || q.scalar_type() != at::kFloat ||
      k.scalar_type() != at::kFloat || v.scalar_type() != at::kFloat || q.size(2) != 1 ||
      H % KV != 0 || qk % 8 != 0 || vd % 8 != 0 || k.stride(3) != 1 || v.stride(3) != 1)
    return {};
  const int64_t rep = H / KV;
  const at::Tensor qc = q.contiguous();
  // Keys outside a row's range keep -inf: the softmax gives them 0 and skips nothing else.
  at::Tensor scores = at::full({B * H, S}, -std::numeric_limits<float>::infinity(), q.options());
  const float* qp = qc.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* sp = scores.data_ptr<float>();
  const float fscale = static_cast<float>(scale);
  // Work items: one (row, key/value head) pair each, its keys times the head size.
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, S * qk * rep));
  at::parallel_for(0, B * KV, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t b = i / KV, g = i % KV;
      score_rows(qp + (b * H + g * rep) * qk, kp + b * k.stride(0) + g * k.stride(1), k.stride(2),
                 qk, rep, first[b], last[b], fscale, sp + (b * H + g * rep) * S, S);
    }
  });
  const at::Tensor p = at::softmax(scores, -1);
  at::Tensor out = at::empty({B, H, 1, vd}, q.options());
  const float* pp = p.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, B * KV, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t b = i / KV, g = i % KV;
      weigh_values(pp + (b * H + g * rep) * S, S, vp + b * v.stride(0) + g * v.stride(1),
                   v.stride(2), vd, rep, first[b], last[b], op + (b * H + g * rep) * vd);
    }
  });
  return out;
}

}  // namespace lmeval::hf

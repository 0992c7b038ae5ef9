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

// The lanes' sums of eight vectors x0..x7, each as lanes_sum adds them
// (((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7))), into one vector [x0, x2, x4, x6, x1, x3, x5, x7]:
// the same additions on lanes side by side, so the same bits, for a third of the instructions.
__attribute__((target("avx2,fma"))) inline __m256 lanes_sums8(const __m256* x) {
  __m256 s[4];
  for (int i = 0; i < 4; ++i)  // [lo + hi of x(2i) | lo + hi of x(2i+1)]
    s[i] = _mm256_add_ps(_mm256_permute2f128_ps(x[2 * i], x[2 * i + 1], 0x20),
                         _mm256_permute2f128_ps(x[2 * i], x[2 * i + 1], 0x31));
  __m256 c[2];
  for (int i = 0; i < 2; ++i)  // (s0 + s2), (s1 + s3) of each
    c[i] = _mm256_add_ps(_mm256_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm256_add_ps(_mm256_shuffle_ps(c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm256_shuffle_ps(c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// Scores of one query head over keys first..last into row[first..last]: per key one fused
// multiply-add chain over the head's dimensions in 8 lanes, then the lanes' sum (lanes_sum),
// times `scale`. Eight keys run side by side (independent chains) and their sums together.
__attribute__((target("avx2,fma"))) void score_head(const float* q, const float* keys,
                                                    int64_t key_stride, int64_t qk, int64_t first,
                                                    int64_t last, float scale, float* row) {
  // Key order within the eight so that lanes_sums8 returns them in order.
  static constexpr int kSlot[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t t = first;
  for (; t + 8 <= last + 1; t += 8) {
    const float* k0 = keys + t * key_stride;
    __m256 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t d = 0; d < qk; d += 8) {
      const __m256 qv = _mm256_loadu_ps(q + d);
      for (int i = 0; i < 8; ++i)
        acc[i] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + kSlot[i] * key_stride + d), acc[i]);
    }
    _mm256_storeu_ps(row + t, _mm256_mul_ps(lanes_sums8(acc), vscale));
  }
  for (; t <= last; ++t) {
    const float* kr = keys + t * key_stride;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t d = 0; d < qk; d += 8)
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kr + d), acc);
    row[t] = lanes_sum(acc) * scale;
  }
}

// out[j] = sum over t of p[j][t] * values[j][t] for NH query heads j at once, NV vectors of
// their value dimensions each: per output element one fused multiply-add chain over t in
// increasing order. NH x NV <= 8 chains run side by side, so a head of 8 dimensions does not
// wait on one chain's latency per key.
template <int NH, int NV>
__attribute__((target("avx2,fma"))) void weigh_heads(const float* const* p,
                                                     const float* const* values,
                                                     int64_t value_stride, int64_t first,
                                                     int64_t last, float* const* out) {
  __m256 acc[NH][NV];
  for (int j = 0; j < NH; ++j)
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_setzero_ps();
  for (int64_t t = first; t <= last; ++t)
    for (int j = 0; j < NH; ++j) {
      const __m256 pt = _mm256_set1_ps(p[j][t]);
      const float* vr = values[j] + t * value_stride;
      for (int v = 0; v < NV; ++v)
        acc[j][v] = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vr + 8 * v), acc[j][v]);
    }
  for (int j = 0; j < NH; ++j)
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out[j] + 8 * v, acc[j][v]);
}

using WeighFn = void (*)(const float* const*, const float* const*, int64_t, int64_t, int64_t,
                         float* const*);
// weigh_heads for NV vectors (1..8) and the most heads that fit eight chains.
constexpr WeighFn kWeigh[8] = {weigh_heads<8, 1>, weigh_heads<4, 2>, weigh_heads<2, 3>,
                               weigh_heads<2, 4>, weigh_heads<1, 5>, weigh_heads<1, 6>,
                               weigh_heads<1, 7>, weigh_heads<1, 8>};

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace

#else  // no AVX2 kernels on other processors: the general path runs

namespace lmeval::hf {
namespace {
bool cpu_has_avx2_fma() { return false; }
void score_head(const float*, const float*, int64_t, int64_t, int64_t, int64_t, float, float*) {}
using WeighFn = void (*)(const float* const*, const float* const*, int64_t, int64_t, int64_t,
                         float* const*);
constexpr WeighFn kWeigh[8] = {};
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
  // Tasks: (row, a run of its query heads), about 16 of them, so that both threads get work
  // whatever the batch, and a task's heads share the row's key range (more chains side by side).
  const int64_t per = std::clamp<int64_t>(H * B / 16, 1, H);
  const int64_t runs = (H + per - 1) / per;
  const int64_t grain =
      std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, S * std::max(qk, vd) * per));
  at::parallel_for(0, B * runs, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t b = i / runs, h0 = i % runs * per, h1 = std::min(H, h0 + per);
      for (int64_t h = h0; h < h1; ++h)
        score_head(qp + (b * H + h) * qk, kp + b * k.stride(0) + h / rep * k.stride(1), k.stride(2),
                   qk, first[b], last[b], fscale, sp + (b * H + h) * S);
    }
  });
  const at::Tensor p = at::softmax(scores, -1);
  at::Tensor out = at::empty({B, H, 1, vd}, q.options());
  const float* pp = p.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, B * runs, grain, [&](int64_t i0, int64_t i1) {
    std::vector<float> spare(static_cast<size_t>(vd));  // outputs of padding heads
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t b = i / runs, h0 = i % runs * per, h1 = std::min(H, h0 + per);
      // Up to 64 value dimensions at a time; a group of nh heads per call, the last group
      // padded with copies of its last head whose outputs go to `spare`.
      for (int64_t d = 0; d < vd; d += 64) {
        const int64_t nv = std::min<int64_t>(8, (vd - d) / 8), nh = nv == 1   ? 8
                                                                    : nv == 2 ? 4
                                                                    : nv <= 4 ? 2
                                                                              : 1;
        for (int64_t h = h0; h < h1; h += nh) {
          const float* prow[8];
          const float* vals[8];
          float* outs[8];
          for (int64_t j = 0; j < nh; ++j) {
            const int64_t hj = std::min(h + j, h1 - 1);
            prow[j] = pp + (b * H + hj) * S;
            vals[j] = vp + b * v.stride(0) + hj / rep * v.stride(1) + d;
            outs[j] = h + j < h1 ? op + (b * H + hj) * vd + d : spare.data();
          }
          kWeigh[nv - 1](prow, vals, v.stride(2), first[b], last[b], outs);
        }
      }
    }
  });
  return out;
}

}  // namespace lmeval::hf

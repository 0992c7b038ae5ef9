#include "models/hf/decode_attention.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#include "models/hf/cpu_float32.hpp"
#include "models/hf/kernels.hpp"

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

// score_heads' blocks of eight keys for heads of 8 dimensions whose keys are adjacent
// (key_stride 8), with AVX-512: a block of a key head (4 vectors of 16) is transposed once into
// [dimension 2i | dimension 2i+1] x its 8 keys for all its query heads, and each head's products
// q[d] * k[d] (one rounding, as the fused multiply-add from zero) are added lane by lane as
// ((d0 + d4) + (d2 + d6)) + ((d1 + d5) + (d3 + d7)): lanes_sum's order, so the same bits, with 5
// shuffles per head instead of 15 (the 64-row steps of stories260K are bound by the shuffle
// port). Returns the first key not done; vmax[j] takes the block maxima.
__attribute__((target("avx512f,avx512dq,avx2,fma"))) int64_t score_blocks_8d_avx512(
    int nh, const float* const* q, const float* const* keys, int64_t first, int64_t last,
    float scale, float* const* rows, __m256* vmax) {
  // Lane m of U = dims 0..3 (or 4..7) x keys 0..3 of a pair of vectors of keys {0,1},{2,3}.
  alignas(64) int32_t ia[16], ib[16], ic[16], id[16];
  for (int m = 0; m < 16; ++m) {
    const int key4 = m & 3, key8 = m & 7;
    ia[m] = (key4 < 2 ? 0 : 16) + (key4 & 1) * 8 + (m >> 2);
    ib[m] = ia[m] + 4;
    ic[m] = (key8 < 4 ? 0 : 16) + 4 * (m >> 3) + (key8 & 3);
    id[m] = ic[m] + 8;
  }
  const __m512i va = _mm512_load_si512(ia), vb = _mm512_load_si512(ib), vc = _mm512_load_si512(ic),
                vd = _mm512_load_si512(id);
  alignas(64) float qpairs[8][4][16];  // [q[2i] x 8 | q[2i+1] x 8] per head
  for (int j = 0; j < nh; ++j)
    for (int i = 0; i < 4; ++i)
      for (int l = 0; l < 16; ++l) qpairs[j][i][l] = q[j][2 * i + l / 8];
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t t = first;
  for (; t + 8 <= last + 1; t += 8) {
    __m512 tr[4];
    for (int j = 0; j < nh; ++j) {
      if (j == 0 || keys[j] != keys[j - 1]) {
        const float* k0 = keys[j] + t * 8;
        const __m512 z0 = _mm512_loadu_ps(k0), z1 = _mm512_loadu_ps(k0 + 16),
                     z2 = _mm512_loadu_ps(k0 + 32), z3 = _mm512_loadu_ps(k0 + 48);
        const __m512 u0 = _mm512_permutex2var_ps(z0, va, z1),
                     u1 = _mm512_permutex2var_ps(z0, vb, z1),
                     u2 = _mm512_permutex2var_ps(z2, va, z3),
                     u3 = _mm512_permutex2var_ps(z2, vb, z3);
        tr[0] = _mm512_permutex2var_ps(u0, vc, u2);  // [d0 | d1] of the 8 keys
        tr[1] = _mm512_permutex2var_ps(u0, vd, u2);  // [d2 | d3]
        tr[2] = _mm512_permutex2var_ps(u1, vc, u3);  // [d4 | d5]
        tr[3] = _mm512_permutex2var_ps(u1, vd, u3);  // [d6 | d7]
      }
      const __m512 e0 = _mm512_add_ps(_mm512_mul_ps(tr[0], _mm512_load_ps(qpairs[j][0])),
                                      _mm512_mul_ps(tr[2], _mm512_load_ps(qpairs[j][2])));
      const __m512 e1 = _mm512_add_ps(_mm512_mul_ps(tr[1], _mm512_load_ps(qpairs[j][1])),
                                      _mm512_mul_ps(tr[3], _mm512_load_ps(qpairs[j][3])));
      const __m512 f = _mm512_add_ps(e0, e1);
      const __m256 sc = _mm256_mul_ps(
          _mm256_add_ps(_mm512_castps512_ps256(f), _mm512_extractf32x8_ps(f, 1)), vscale);
      vmax[j] = _mm256_max_ps(vmax[j], sc);
      _mm256_storeu_ps(rows[j] + (t - first), sc);
    }
  }
  return t;
}

// Scores of nh <= 8 query heads j over their keys (keys[j]) first..last into rows[j][0..last -
// first], their largest into maxes[j]: per key one fused multiply-add chain over the head's
// dimensions in 8 lanes, then the lanes' sum (lanes_sum), times `scale`. Eight keys run side by
// side (independent chains) and their sums together (lanes_sums8); the heads' key streams are
// read side by side, eight keys of each in turn (a decoding step's keys are not in cache, and
// one stream of 32-byte keys at a time left the loads waiting on memory: stories260K's 64-row
// steps' attention 7.1 -> 5.5 ms on one thread). Within a block the keys are read in address
// order, each key's dimensions in turn, and the sums put back in key order afterwards: reading
// the eight keys' first dimensions, then their second, ... (256 bytes apart for a 64-dimension
// head) kept the hardware prefetcher from following the stream (102M Llama's 8-row steps'
// attention on one thread 38 -> 26 ms, as fast as a plain read of the same bytes).
__attribute__((target("avx2,fma"))) void score_heads(int nh, const float* const* q,
                                                     const float* const* keys, int64_t key_stride,
                                                     int64_t qk, int64_t first, int64_t last,
                                                     float scale, float* const* rows,
                                                     float* maxes) {
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256 vmax[8];
  for (int j = 0; j < nh; ++j) vmax[j] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t t = first;
  if (qk == 8 && key_stride == 8 && kernels::using_avx512())
    t = score_blocks_8d_avx512(nh, q, keys, first, last, scale, rows, vmax);
  for (; t + 8 <= last + 1; t += 8)
    for (int j = 0; j < nh; ++j) {
      const float* k0 = keys[j] + t * key_stride;
      __m256 acc[8];
      for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
      if (qk == 8) {  // a key is one vector: the query's loaded once
        const __m256 qv = _mm256_loadu_ps(q[j]);
        for (int i = 0; i < 8; ++i)
          acc[i] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + i * key_stride), acc[i]);
      } else {
        for (int i = 0; i < 8; ++i)
          for (int64_t d = 0; d < qk; d += 8)
            acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[j] + d),
                                     _mm256_loadu_ps(k0 + i * key_stride + d), acc[i]);
      }
      const __m256 sc = _mm256_mul_ps(
          _mm256_permutevar8x32_ps(lanes_sums8(acc), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)),
          vscale);
      vmax[j] = _mm256_max_ps(vmax[j], sc);
      _mm256_storeu_ps(rows[j] + (t - first), sc);
    }
  for (int j = 0; j < nh; ++j) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, vmax[j]);
    float m = *std::max_element(lanes, lanes + 8);
    for (int64_t u = t; u <= last; ++u) {
      const float* kr = keys[j] + u * key_stride;
      __m256 acc = _mm256_setzero_ps();
      for (int64_t d = 0; d < qk; d += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(q[j] + d), _mm256_loadu_ps(kr + d), acc);
      rows[j][u - first] = lanes_sum(acc) * scale;
      m = std::max(m, rows[j][u - first]);
    }
    maxes[j] = m;
  }
}

// out[j] = sum over t of p[j][t - first] * values[j][t] for NH query heads j at once, NV vectors
// of their value dimensions each: per output element one fused multiply-add chain over t in
// increasing order. NH x NV <= 8 chains run side by side, so a head of 8 dimensions does not wait
// on one chain's latency per key.
template <int NH, int NV>
__attribute__((target("avx2,fma"))) void weigh_heads(const float* const* p,
                                                     const float* const* values,
                                                     int64_t value_stride, int64_t first,
                                                     int64_t last, float* const* out) {
  __m256 acc[NH][NV];
  for (int j = 0; j < NH; ++j)
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm256_setzero_ps();
  for (int64_t t = first; t <= last; ++t) {
    for (int j = 0; j < NH; ++j) {
      const __m256 pt = _mm256_set1_ps(p[j][t - first]);
      const float* vr = values[j] + t * value_stride;
      for (int v = 0; v < NV; ++v)
        acc[j][v] = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vr + 8 * v), acc[j][v]);
    }
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

}  // namespace

#else  // no AVX2 kernels on other processors: the general path runs

namespace lmeval::hf {
namespace {
void score_heads(int, const float* const*, const float* const*, int64_t, int64_t, int64_t, int64_t,
                 float, float* const*, float*) {}
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
  if (!kernels::cpu_has_avx2_fma() || !cpu_float32(q) || !cpu_float32(k) || !cpu_float32(v) ||
      q.size(2) != 1 || H % KV != 0 || qk % 8 != 0 || vd % 8 != 0 || k.stride(3) != 1 ||
      v.stride(3) != 1)
    return {};
  const int64_t rep = H / KV;
  const at::Tensor qc = q.contiguous();
  at::Tensor out = at::empty({B, H, 1, vd}, q.options());
  const float* qp = qc.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float fscale = static_cast<float>(scale);
  // Tasks: (row, a run of its query heads), about 16 of them, so that both threads get work
  // whatever the batch, and a task's heads share the row's key range (more chains side by side).
  const int64_t per = std::clamp<int64_t>(H * B / 16, 1, H);
  const int64_t runs = (H + per - 1) / per;
  // Heads whose key streams score_heads reads side by side: a block of eight keys of all of them
  // spans up to 2 KB (8 heads of 8 dimensions; one head of 64 or more, where more streams were
  // slower: 102M Llama's 8-row steps' attention 25 -> 27.5 ms with 6).
  const int64_t side = std::clamp<int64_t>(64 / qk, 1, 8);
  const int64_t grain =
      std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, S * std::max(qk, vd) * per));
  // The threads take the tasks in turn as they come (each task's numbers are the same whoever
  // computes them): a worker woken from sleep (OMP_WAIT_POLICY=PASSIVE, hf_plugin.cpp) starts
  // 0.05-0.1 ms late on a VM, and with halves fixed in advance the calling thread then waited for
  // it in every layer (stories260K's 64-row steps 3.3-3.6 -> 2.9-3.1 ms on a 2-core Xeon), and
  // continuous batching's slots, longest prompt first, balance themselves.
  const int64_t tasks = B * runs;
  const int64_t parts =
      std::clamp<int64_t>((tasks + grain - 1) / grain, 1, std::max(1, at::get_num_threads()));
  std::atomic<int64_t> next_task{0};
  at::parallel_for(0, parts, 1, [&](int64_t, int64_t) {
    // The softmax of the scores, one row of the row's keys per head: it stays in L2 between the
    // scores and the values' sums (no [B * H, S] tensor over the longest row's length).
    std::vector<float> probs;
    std::vector<float> spare(static_cast<size_t>(vd));  // outputs of padding heads
    for (int64_t i = next_task.fetch_add(1); i < tasks; i = next_task.fetch_add(1)) {
      const int64_t b = i / runs, h0 = i % runs * per, h1 = std::min(H, h0 + per);
      const int64_t n = last[b] - first[b] + 1;
      if (n <= 0) {  // no key: the eager softmax's 0/0
        for (int64_t h = h0; h < h1; ++h)
          std::fill_n(op + (b * H + h) * vd, vd, std::numeric_limits<float>::quiet_NaN());
        continue;
      }
      probs.resize(static_cast<size_t>((h1 - h0) * n));
      for (int64_t h = h0; h < h1; h += side) {
        const int nh = static_cast<int>(std::min<int64_t>(side, h1 - h));
        const float* qs[8];
        const float* ks[8];
        float* rows[8];
        float maxes[8];
        for (int j = 0; j < nh; ++j) {
          qs[j] = qp + (b * H + h + j) * qk;
          ks[j] = kp + b * k.stride(0) + (h + j) / rep * k.stride(1);
          rows[j] = probs.data() + (h + j - h0) * n;
        }
        score_heads(nh, qs, ks, k.stride(2), qk, first[b], last[b], fscale, rows, maxes);
        for (int j = 0; j < nh; ++j) kernels::softmax_with_max(rows[j], n, maxes[j]);
      }
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
            prow[j] = probs.data() + (hj - h0) * n;
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

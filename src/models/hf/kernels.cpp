// Batch-invariant float32 kernels (see kernels.hpp for the arithmetic contract).
#include "models/hf/kernels.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LMEVAL_HF_X86 1
#endif

namespace lmeval::hf::kernels {

namespace {

// The final combination of the eight lanes; the AVX2 horizontal sum below does the same adds.
inline float combine(const float* l) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// Portable block of MR rows of A against NR rows of W.
template <int MR, int NR>
void block_portable(const float* a, int64_t lda, const float* w, int64_t ldw, float* out,
                    int64_t ldo, int64_t k) {
  float acc[MR][NR][8] = {};
  const int64_t full = k / 8 * 8;
  for (int64_t kk = 0; kk < full; kk += 8)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        for (int l = 0; l < 8; ++l)
          acc[i][j][l] = std::fma(a[i * lda + kk + l], w[j * ldw + kk + l], acc[i][j][l]);
  if (full < k)  // masked tail: absent lanes take fma(0, 0, acc), as the AVX2 masked loads do
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        for (int l = 0; l < 8; ++l) {
          const bool in = full + l < k;
          acc[i][j][l] = std::fma(in ? a[i * lda + full + l] : 0.0f,
                                  in ? w[j * ldw + full + l] : 0.0f, acc[i][j][l]);
        }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) out[i * ldo + j] = combine(acc[i][j]);
}

#ifdef LMEVAL_HF_X86
__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s =
      _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // l0+l4, l1+l5, ...
  __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));  // (l0+l4)+(l2+l6), (l1+l5)+(l3+l7)
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// Lanes 0..r-1 set (0 < r < 8): a masked load or store of a tail of r floats.
__attribute__((target("avx2"))) inline __m256i tail_mask(int64_t r) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(r)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// pf: where the next block's weight rows start (null: none), brought into L2 while this block
// runs. A decoding step's few rows leave the kernel waiting on memory otherwise: on the 2-core
// EPYC, 8 rows against a 102M model's weights ran at 14 GB/s without it and 25 GB/s with it.
template <int MR, int NR>
__attribute__((target("avx2,fma"))) void block_avx2(const float* a, int64_t lda, const float* w,
                                                    int64_t ldw, float* out, int64_t ldo, int64_t k,
                                                    const float* pf) {
  __m256 acc[MR][NR];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  const int64_t full = k / 8 * 8;
  for (int64_t kk = 0; kk < full; kk += 8) {
    __m256 wv[NR];
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) wv[j] = _mm256_loadu_ps(w + j * ldw + kk);
    if (pf) {  // NR rows of k floats ahead, NR * 8 floats per step: two cache lines
      _mm_prefetch(reinterpret_cast<const char*>(pf + kk * NR), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(pf + kk * NR + 16), _MM_HINT_T1);
    }
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_loadu_ps(a + i * lda + kk);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, wv[j], acc[i][j]);
    }
  }
  if (full < k) {
    const __m256i mask = tail_mask(k - full);
    __m256 wv[NR];
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) wv[j] = _mm256_maskload_ps(w + j * ldw + full, mask);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_maskload_ps(a + i * lda + full, mask);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, wv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) out[i * ldo + j] = hsum(acc[i][j]);
}

bool detect_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool detect_avx512() {
  return detect_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#else
bool detect_avx2() { return false; }
bool detect_avx512() { return false; }
#endif

// Whether the AVX2 path runs (tests may switch it off: set_avx2_for_testing).
bool g_avx2 = detect_avx2();
bool g_avx512 = detect_avx512();  // set_avx512_for_testing

// ----- matmul_nn_acc: one fused multiply-add chain per element ------------------------------

// Portable: the chain of element (i, j) for rows i < m, columns [j0, j1).
void nn_portable(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 int64_t m, int64_t j0, int64_t j1, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = j0; j < j1; ++j) {
      float acc = c[i * ldc + j];
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * lda + p], b[p * ldb + j], acc);
      c[i * ldc + j] = acc;
    }
}

#ifdef LMEVAL_HF_X86
// MR rows of C by NV vectors of 8 columns: the classic outer-product micro-kernel; lane j of
// an accumulator runs exactly the scalar chain of element j.
template <int MR, int NV>
__attribute__((target("avx2,fma"))) void nn_block_avx2(const float* a, int64_t lda, const float* b,
                                                       int64_t ldb, float* c, int64_t ldc,
                                                       int64_t k) {
  __m256 acc[MR][NV];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_loadu_ps(c + i * ldc + 8 * v);
  for (int64_t p = 0; p < k; ++p) {
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(b + p * ldb + 8 * v);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i * lda + p);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(c + i * ldc + 8 * v, acc[i][v]);
}

template <int NV>
void nn_rows_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                  int64_t k, int mr) {
  switch (mr) {
    case 4:
      return nn_block_avx2<4, NV>(a, lda, b, ldb, c, ldc, k);
    case 3:
      return nn_block_avx2<3, NV>(a, lda, b, ldb, c, ldc, k);
    case 2:
      return nn_block_avx2<2, NV>(a, lda, b, ldb, c, ldc, k);
    default:
      return nn_block_avx2<1, NV>(a, lda, b, ldb, c, ldc, k);
  }
}

void nn_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
             int64_t m, int64_t n, int64_t k) {
  constexpr int kRows = 4;  // 4 x 3 vectors: 12 accumulators, 3 B vectors, 1 broadcast
  int64_t j = 0;
  for (; j + 8 <= n;) {
    const int nv = static_cast<int>(std::min<int64_t>(3, (n - j) / 8));
    for (int64_t i = 0; i < m; i += kRows) {
      const int mr = static_cast<int>(std::min<int64_t>(kRows, m - i));
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j;
      if (nv == 3)
        nn_rows_avx2<3>(ai, lda, b + j, ldb, ci, ldc, k, mr);
      else if (nv == 2)
        nn_rows_avx2<2>(ai, lda, b + j, ldb, ci, ldc, k, mr);
      else
        nn_rows_avx2<1>(ai, lda, b + j, ldb, ci, ldc, k, mr);
    }
    j += 8 * nv;
  }
  if (j < n) nn_portable(a, lda, b, ldb, c, ldc, m, j, n, k);
}

// nn_block_avx2 on 16 columns per vector (AVX-512 F): each element the same chain.
template <int MR, int NV>
__attribute__((target("avx512f,avx2,fma"))) void nn_block_avx512(const float* a, int64_t lda,
                                                                 const float* b, int64_t ldb,
                                                                 float* c, int64_t ldc, int64_t k) {
  __m512 acc[MR][NV];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_loadu_ps(c + i * ldc + 16 * v);
  for (int64_t p = 0; p < k; ++p) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(b + p * ldb + 16 * v);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
}

template <int NV>
void nn_rows_avx512(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                    int64_t k, int mr) {
  switch (mr) {
    case 4:
      return nn_block_avx512<4, NV>(a, lda, b, ldb, c, ldc, k);
    case 3:
      return nn_block_avx512<3, NV>(a, lda, b, ldb, c, ldc, k);
    case 2:
      return nn_block_avx512<2, NV>(a, lda, b, ldb, c, ldc, k);
    default:
      return nn_block_avx512<1, NV>(a, lda, b, ldb, c, ldc, k);
  }
}

// nn_avx2's blocks 16 columns wide; the columns past the last 16 go to nn_avx2.
void nn_avx512(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t m, int64_t n, int64_t k) {
  constexpr int kRows = 4;
  int64_t j = 0;
  for (; j + 16 <= n;) {
    const int nv = static_cast<int>(std::min<int64_t>(3, (n - j) / 16));
    for (int64_t i = 0; i < m; i += kRows) {
      const int mr = static_cast<int>(std::min<int64_t>(kRows, m - i));
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j;
      if (nv == 3)
        nn_rows_avx512<3>(ai, lda, b + j, ldb, ci, ldc, k, mr);
      else if (nv == 2)
        nn_rows_avx512<2>(ai, lda, b + j, ldb, ci, ldc, k, mr);
      else
        nn_rows_avx512<1>(ai, lda, b + j, ldb, ci, ldc, k, mr);
    }
    j += 16 * nv;
  }
  if (j < n) nn_avx2(a, lda, b + j, ldb, c + j, ldc, m, n - j, k);
}
#endif

// ----- exp: one float32 polynomial (Cephes' expf), the same operations on both paths ---------

constexpr float kExpLo = -87.33654f;  // below: 0 (exp underflows to subnormals there)
constexpr float kExpHi = 88.3762626647949f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500E-4f, kP1 = 1.3981999507E-3f, kP2 = 8.3334519073E-3f,
                kP3 = 4.1665795894E-2f, kP4 = 1.6666665459E-1f, kP5 = 5.0000001201E-1f;

float exp_portable(float x) {
  if (!(x >= kExpLo)) return x != x ? x : 0.0f;
  x = std::min(x, kExpHi);
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(n, -kLn2Hi, x);
  r = std::fma(n, -kLn2Lo, r);
  float p = kP0;
  p = std::fma(p, r, kP1);
  p = std::fma(p, r, kP2);
  p = std::fma(p, r, kP3);
  p = std::fma(p, r, kP4);
  p = std::fma(p, r, kP5);
  const float z = r * r;
  const float y = std::fma(p, z, r) + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return y * two_n;
}

#ifdef LMEVAL_HF_X86
__attribute__((target("avx2,fma"))) __m256 exp_avx2(__m256 x) {
  const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_GE_OQ);
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 xin = x;
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  const __m256 z = _mm256_mul_ps(r, r);
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, z, r), _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 e = _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
  return _mm256_blendv_ps(_mm256_and_ps(e, keep), xin, nan);
}

__attribute__((target("avx2,fma"))) void exp_shifted_avx2(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  for (; i < n; ++i) x[i] = exp_portable(x[i] - shift);
}

__attribute__((target("avx2,fma"))) float exp_shifted_sum_avx2(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (i < n) {  // the tail in lanes 0..n-i-1, as sum takes it; the others add exact zeros
    const __m256i mask = tail_mask(n - i);
    const __m256 e = _mm256_and_ps(exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)),
                                   _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(x + i, mask, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float l[8];
  _mm256_store_ps(l, acc);
  return combine(l);
}

// exp_avx2's operations on 16 lanes (AVX-512 F): the same bits per element.
__attribute__((target("avx512f,avx2,fma"))) __m512 exp_avx512(__m512 x) {
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpLo), _CMP_GE_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __m512 xin = x;
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpLo)), _mm512_set1_ps(kExpHi));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Hi), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  const __m512 z = _mm512_mul_ps(r, r);
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, z, r), _mm512_set1_ps(1.0f));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  const __m512 e = _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
  return _mm512_mask_blend_ps(nan, _mm512_maskz_mov_ps(keep, e), xin);
}

// exp_shifted_sum_avx2 with sixteen elements per step: each 16's halves join the 8-lane sum one
// after the other, as two of exp_shifted_sum_avx2's steps would (the same bits, the
// polynomial's instructions halved).
__attribute__((target("avx512f,avx512dq,avx2,fma"))) float exp_shifted_sum_avx512(float* x,
                                                                                  int64_t n,
                                                                                  float shift) {
  const __m512 s16 = _mm512_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), s16));
    _mm512_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
    acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
  }
  const __m256 s = _mm256_set1_ps(shift);
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (i < n) {  // as exp_shifted_sum_avx2's tail
    const __m256i mask = tail_mask(n - i);
    const __m256 e = _mm256_and_ps(exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)),
                                   _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(x + i, mask, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float l[8];
  _mm256_store_ps(l, acc);
  return combine(l);
}

__attribute__((target("avx2"))) float max_avx2(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
  alignas(32) float l[8];
  _mm256_store_ps(l, m);
  float r = l[0];
  for (int j = 1; j < 8; ++j) r = std::max(r, l[j]);
  for (; i < n; ++i) r = std::max(r, x[i]);
  return r;
}
#endif

constexpr int kMR = 4, kNR = 3;  // 12 accumulators + 3 weight vectors + 1 row vector

template <int MR, int NR>
void block(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
           int64_t k, const float* pf) {
#ifdef LMEVAL_HF_X86
  if (g_avx2) return block_avx2<MR, NR>(a, lda, w, ldw, out, ldo, k, pf);
#endif
  block_portable<MR, NR>(a, lda, w, ldw, out, ldo, k);
}

template <int MR>
void block_rows(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
                int64_t k, int nr, const float* pf) {
  switch (nr) {
    case 3:
      return block<MR, 3>(a, lda, w, ldw, out, ldo, k, pf);
    case 2:
      return block<MR, 2>(a, lda, w, ldw, out, ldo, k, pf);
    default:
      return block<MR, 1>(a, lda, w, ldw, out, ldo, k, pf);
  }
}

void any_block(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
               int64_t k, int mr, int nr, const float* pf = nullptr) {
  switch (mr) {
    case 4:
      return block_rows<4>(a, lda, w, ldw, out, ldo, k, nr, pf);
    case 3:
      return block_rows<3>(a, lda, w, ldw, out, ldo, k, nr, pf);
    case 2:
      return block_rows<2>(a, lda, w, ldw, out, ldo, k, nr, pf);
    default:
      return block_rows<1>(a, lda, w, ldw, out, ldo, k, nr, pf);
  }
}

}  // namespace

bool using_avx2() { return g_avx2; }

bool cpu_has_avx2_fma() {
  static const bool has = detect_avx2();
  return has;
}

void set_avx2_for_testing(bool on) { g_avx2 = on && detect_avx2(); }

bool using_avx512() { return g_avx512; }

void set_avx512_for_testing(bool on) { g_avx512 = on && detect_avx512(); }

float dot(const float* a, const float* b, int64_t k) {
  float r = 0;
  any_block(a, k, b, k, &r, 1, k, 1, 1);
  return r;
}

float sum(const float* x, int64_t n) {
  float lanes[8] = {};
  const int64_t full = n / 8 * 8;
  for (int64_t i = 0; i < full; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + l];
  for (int l = 0; full + l < n; ++l) lanes[l] += x[full + l];
  return combine(lanes);
}

void matmul_nn_acc(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                   int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return;
#ifdef LMEVAL_HF_X86
  if (g_avx2 && g_avx512) return nn_avx512(a, lda, b, ldb, c, ldc, m, n, k);
  if (g_avx2) return nn_avx2(a, lda, b, ldb, c, ldc, m, n, k);
#endif
  nn_portable(a, lda, b, ldb, c, ldc, m, 0, n, k);
}

void exp_shifted(float* x, int64_t n, float shift) {
#ifdef LMEVAL_HF_X86
  if (g_avx2) return exp_shifted_avx2(x, n, shift);
#endif
  for (int64_t i = 0; i < n; ++i) x[i] = exp_portable(x[i] - shift);
}

float max(const float* x, int64_t n) {
#ifdef LMEVAL_HF_X86
  if (g_avx2) return max_avx2(x, n);
#endif
  float r = x[0];
  for (int64_t i = 1; i < n; ++i) r = std::max(r, x[i]);
  return r;
}

float exp_shifted_sum(float* x, int64_t n, float shift) {
#ifdef LMEVAL_HF_X86
  if (g_avx2 && g_avx512) return exp_shifted_sum_avx512(x, n, shift);
  if (g_avx2) return exp_shifted_sum_avx2(x, n, shift);
#endif
  exp_shifted(x, n, shift);
  return sum(x, n);
}

void softmax_with_max(float* x, int64_t n, float largest) {
  const float inv = 1.0f / exp_shifted_sum(x, n, largest);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void softmax(float* x, int64_t n) { softmax_with_max(x, n, max(x, n)); }

void matmul_nt(const float* a, int64_t lda, const float* w, int64_t ldw, const float* bias,
               float* c, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0) return;
  // Rows of A per pass, so that a pass's rows stay in L2 while W's rows stream through L1.
  const int64_t mc =
      std::clamp<int64_t>((int64_t{64} << 10) / std::max<int64_t>(k, 1) / kMR * kMR, kMR, 256);
  const int64_t col_blocks = (n + kNR - 1) / kNR;
  // Column blocks per task: ~4M multiply-adds, enough to amortise a parallel region's fork and
  // join (small models stay on one thread).
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 22) / std::max<int64_t>(m * k * kNR, 1));
  at::parallel_for(0, col_blocks, grain, [&](int64_t cb0, int64_t cb1) {
    for (int64_t i0 = 0; i0 < m; i0 += mc) {
      const int64_t i1 = std::min(m, i0 + mc);
      for (int64_t cb = cb0; cb < cb1; ++cb) {
        const int64_t j = cb * kNR;
        const int nr = static_cast<int>(std::min<int64_t>(kNR, n - j));
        // Every pass of rows over this block asks for the next block's weights: a request the
        // memory system dropped in the first pass is made again (measured: 8 rows against a
        // 102M model's weights 22 ms with the first pass's requests only, 17-18 ms with all).
        const float* next = cb + 1 < cb1 ? w + (j + kNR) * ldw : nullptr;
        for (int64_t i = i0; i < i1; i += kMR) {
          const int mr = static_cast<int>(std::min<int64_t>(kMR, i1 - i));
          any_block(a + i * lda, lda, w + j * ldw, ldw, c + i * ldc + j, ldc, k, mr, nr, next);
        }
      }
    }
  });
  if (bias)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += bias[j];
}

}  // namespace lmeval::hf::kernels

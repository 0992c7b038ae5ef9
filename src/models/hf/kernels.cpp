// Batch-invariant float32 kernels (see kernels.hpp for the arithmetic contract).
#include "models/hf/kernels.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

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

template <int MR, int NR>
__attribute__((target("avx2,fma"))) void block_avx2(const float* a, int64_t lda, const float* w,
                                                    int64_t ldw, float* out, int64_t ldo,
                                                    int64_t k) {
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
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_loadu_ps(a + i * lda + kk);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, wv[j], acc[i][j]);
    }
  }
  if (full < k) {
    alignas(32) int32_t m[8];
    for (int l = 0; l < 8; ++l) m[l] = full + l < k ? -1 : 0;
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
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
#else
bool detect_avx2() { return false; }
#endif

const bool kAvx2 = detect_avx2();

constexpr int kMR = 4, kNR = 3;  // 12 accumulators + 3 weight vectors + 1 row vector

template <int MR, int NR>
void block(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
           int64_t k) {
#ifdef LMEVAL_HF_X86
  if (kAvx2) return block_avx2<MR, NR>(a, lda, w, ldw, out, ldo, k);
#endif
  block_portable<MR, NR>(a, lda, w, ldw, out, ldo, k);
}

template <int MR>
void block_rows(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
                int64_t k, int nr) {
  switch (nr) {
    case 3:
      return block<MR, 3>(a, lda, w, ldw, out, ldo, k);
    case 2:
      return block<MR, 2>(a, lda, w, ldw, out, ldo, k);
    default:
      return block<MR, 1>(a, lda, w, ldw, out, ldo, k);
  }
}

void any_block(const float* a, int64_t lda, const float* w, int64_t ldw, float* out, int64_t ldo,
               int64_t k, int mr, int nr) {
  switch (mr) {
    case 4:
      return block_rows<4>(a, lda, w, ldw, out, ldo, k, nr);
    case 3:
      return block_rows<3>(a, lda, w, ldw, out, ldo, k, nr);
    case 2:
      return block_rows<2>(a, lda, w, ldw, out, ldo, k, nr);
    default:
      return block_rows<1>(a, lda, w, ldw, out, ldo, k, nr);
  }
}

}  // namespace

bool using_avx2() { return kAvx2; }

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
        for (int64_t i = i0; i < i1; i += kMR) {
          const int mr = static_cast<int>(std::min<int64_t>(kMR, i1 - i));
          any_block(a + i * lda, lda, w + j * ldw, ldw, c + i * ldc + j, ldc, k, mr, nr);
        }
      }
    }
  });
  if (bias)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += bias[j];
}

}  // namespace lmeval::hf::kernels

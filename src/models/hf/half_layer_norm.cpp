// torch 2.15's half-precision LayerNorm on the CPU (half_layer_norm.hpp). Built with
// -ffp-contract=off: the fused multiply-adds are where torch has them (std::fma), nowhere else.
#include "models/hf/half_layer_norm.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace lmeval::hf {

namespace {

constexpr int64_t kHalfVec = 16;  // Vectorized<BFloat16/Half>::size() on AVX2
constexpr int64_t kLanes = 8;     // Vectorized<float>::size() on AVX2
constexpr int64_t kChunk = 16;    // moments_utils.h kChunkSize
using Lanes = std::array<float, kLanes>;

struct VecMoments {
  int64_t m0 = 0;
  Lanes m1{}, m2{};
};

// AddMomentsVec: merges (m0_add, m1_add, m2_add) into s.
void add_vec(int64_t m0_add, const Lanes& m1_add, const Lanes& m2_add, VecMoments& s) {
  const int64_t n = s.m0 + m0_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n);
  for (int64_t l = 0; l < kLanes; ++l) {
    const float delta = m1_add[l] - s.m1[l];
    const float m2_tmp = s.m2[l] + m2_add[l];
    const float c_delta = c * delta;
    const float m0_delta = delta * static_cast<float>(s.m0);
    s.m1[l] = s.m1[l] + c_delta;
    s.m2[l] = std::fma(m0_delta, c_delta, m2_tmp);
  }
  s.m0 = n;
}

// The compiled scalar AddMoments: GCC contracts its `m1 += c * delta` and the product added to
// m2_add into fused multiply-adds (found by comparing with torch's own moments).
void add_scalar(int64_t m0_add, float m1_add, float m2_add, int64_t& m0, float& m1, float& m2) {
  const int64_t n = m0 + m0_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n);
  const float delta = m1_add - m1;
  m1 = std::fma(c, delta, m1);
  m2 = m2 + std::fma(delta * delta * c, static_cast<float>(m0), m2_add);
  m0 = n;
}

int64_t ceil_log2(int64_t m) {
  int64_t d = 0;
  while ((int64_t{1} << d) < m) ++d;
  return d;
}

// RowwiseMoments(x, N): the mean and the biased variance.
std::pair<float, float> row_moments(const float* x, int64_t N) {
  const int64_t n = N / kHalfVec;
  const int64_t m = (n + kChunk - 1) / kChunk;
  const int64_t depth = ceil_log2(m);
  // The cascade's stack (RowwiseMoments' kMaxDepth): 40 levels hold rows of 2^48 values.
  std::array<VecMoments, 40> stk{};
  for (int64_t i = 0; i < m; ++i) {
    const float* p = x + i * kChunk * kHalfVec;
    const int64_t m0 = std::min(kChunk, n - i * kChunk);
    // UpdateMomentsVec: each half vector's two float halves in their own accumulators.
    Lanes m1[2]{}, m2[2]{};
    for (int64_t j = 0; j < m0; ++j) {
      const float c = 1.0f / static_cast<float>(j + 1);
      for (int h = 0; h < 2; ++h)
        for (int64_t l = 0; l < kLanes; ++l) {
          const float v = p[j * kHalfVec + h * kLanes + l];
          const float delta = v - m1[h][l];
          m1[h][l] = std::fma(delta, c, m1[h][l]);
          m2[h][l] = std::fma(delta, v - m1[h][l], m2[h][l]);
        }
    }
    add_vec(m0, m1[0], m2[0], stk[0]);
    add_vec(m0, m1[1], m2[1], stk[0]);
    int64_t mask = i + 1;
    for (int64_t j = 1; j < depth && (mask & 1) == 0; ++j) {
      add_vec(stk[j - 1].m0, stk[j - 1].m1, stk[j - 1].m2, stk[j]);
      stk[j - 1] = VecMoments{};
      mask >>= 1;
    }
  }
  for (int64_t i = 1; i < depth; ++i) add_vec(stk[i].m0, stk[i].m1, stk[i].m2, stk[0]);
  int64_t m0 = 0;
  float m1 = 0.0f, m2 = 0.0f;
  for (int64_t i = n * kHalfVec; i < N; ++i) {
    const float v = x[i];
    const float delta = v - m1;
    ++m0;
    m1 += delta / static_cast<float>(m0);
    m2 = std::fma(delta, v - m1, m2);
  }
  const int64_t m0_add = n * kHalfVec / kLanes;
  for (int64_t l = 0; l < kLanes; ++l) add_scalar(m0_add, stk[0].m1[l], stk[0].m2[l], m0, m1, m2);
  return {m1, m2 / static_cast<float>(N)};
}

}  // namespace

at::Tensor layer_norm_half(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                           double eps) {
  const int64_t N = x.size(-1);
  const at::Tensor xf = x.to(at::kFloat).contiguous();
  at::Tensor y = at::empty_like(xf);
  const at::Tensor wf = w.defined() ? w.to(at::kFloat).contiguous() : at::ones({N}, xf.options());
  const at::Tensor bf = b.defined() ? b.to(at::kFloat).contiguous() : at::zeros({N}, xf.options());
  const float* xp = xf.data_ptr<float>();
  const float* wp = wf.data_ptr<float>();
  const float* bp = bf.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const auto e = static_cast<float>(eps);
  at::parallel_for(0, xf.numel() / N, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = xp + r * N;
      const auto [mean, var] = row_moments(xr, N);
      const float rstd = 1.0f / std::sqrt(var + e);
      const float bias = -rstd * mean;
      for (int64_t i = 0; i < N; ++i)
        yp[r * N + i] = std::fma(std::fma(xr[i], rstd, bias), wp[i], bp[i]);
    }
  });
  return y.to(x.scalar_type());
}

float torch_inner_sum(const float* x, int64_t n) {
  constexpr int64_t kIlp = 4, kLevels = 4;
  if (n < kLanes) {
    // Rows narrower than one vector take cascade_sum's scalar_inner_sum: row_sum over the
    // elements themselves: four interleaved partial sums (too few elements for its cascade),
    // the leftovers into the first, then the four added in order.
    std::array<float, kIlp> part{};
    const int64_t whole = n / kIlp * kIlp;
    for (int64_t i = 0; i < whole; ++i) part[static_cast<size_t>(i % kIlp)] += x[i];
    for (int64_t i = whole; i < n; ++i) part[0] += x[i];
    for (int64_t k = 1; k < kIlp; ++k) part[0] += part[static_cast<size_t>(k)];
    return part[0];
  }
  // vectorized_inner_sum -> row_sum (ilp_factor 4) -> multi_row_sum (num_levels 4).
  const int64_t vecs = n / kLanes, size = vecs / kIlp;
  int64_t ceil_log2 = 0;
  while ((int64_t{1} << ceil_log2) < size) ++ceil_log2;
  const int64_t power = std::max<int64_t>(4, ceil_log2 / kLevels), step = int64_t{1} << power;
  const int64_t mask = step - 1;
  std::array<std::array<Lanes, kLevels>, kIlp> acc{};
  auto add = [](Lanes& a, const Lanes& b) {
    for (int64_t l = 0; l < kLanes; ++l) a[l] += b[l];
  };
  auto add_vec_at = [&](Lanes& a, int64_t v) {
    for (int64_t l = 0; l < kLanes; ++l) a[l] += x[v * kLanes + l];
  };
  int64_t i = 0;
  while (i + step <= size) {
    for (int64_t j = 0; j < step; ++j, ++i)
      for (int64_t k = 0; k < kIlp; ++k) add_vec_at(acc[k][0], i * kIlp + k);
    for (int64_t j = 1; j < kLevels; ++j) {
      for (int64_t k = 0; k < kIlp; ++k) {
        add(acc[k][j], acc[k][j - 1]);
        acc[k][j - 1] = Lanes{};
      }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int64_t k = 0; k < kIlp; ++k) add_vec_at(acc[k][0], i * kIlp + k);
  for (int64_t j = 1; j < kLevels; ++j)
    for (int64_t k = 0; k < kIlp; ++k) add(acc[k][0], acc[k][j]);
  for (int64_t v = size * kIlp; v < vecs; ++v) add_vec_at(acc[0][0], v);
  for (int64_t k = 1; k < kIlp; ++k) add(acc[0][0], acc[k][0]);
  float sum = 0.0f;
  for (int64_t j = vecs * kLanes; j < n; ++j) sum += x[j];
  for (int64_t l = 0; l < kLanes; ++l) sum += acc[0][0][l];
  return sum;
}

at::Tensor normalized_by_formula(const at::Tensor& x, double eps) {
  const int64_t N = x.size(-1);
  const at::Tensor xf = x.to(at::kFloat).contiguous();
  at::Tensor y = at::empty_like(xf);
  const float* xp = xf.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const auto e = static_cast<float>(eps);
  const auto n = static_cast<float>(N);
  at::parallel_for(0, xf.numel() / N, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> sq(static_cast<size_t>(N));
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = xp + r * N;
      float* yr = yp + r * N;
      const float mean = torch_inner_sum(xr, N) / n;
      for (int64_t i = 0; i < N; ++i) {
        yr[i] = xr[i] - mean;
        sq[static_cast<size_t>(i)] = yr[i] * yr[i];
      }
      const float var = torch_inner_sum(sq.data(), N) / n;
      const float rstd = 1.0f / std::sqrt(var + e);
      for (int64_t i = 0; i < N; ++i) yr[i] *= rstd;
    }
  });
  return y;
}

}  // namespace lmeval::hf

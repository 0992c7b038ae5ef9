// The batch-invariant kernels' arithmetic contract (kernels.hpp): matmul_nn_acc is one fused
// multiply-add chain per element, exp_shifted one polynomial per element, and the AVX2 and
// portable paths give the same bits.
#include "models/hf/kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace lmeval::hf::kernels {
namespace {

std::vector<float> randn(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Restores the AVX2 and AVX-512 paths after a test that switched them off.
struct Avx2Guard {
  bool was = using_avx2(), was512 = using_avx512();
  ~Avx2Guard() {
    set_avx2_for_testing(was);
    set_avx512_for_testing(was512);
  }
};

// The chain, written out in the test: acc = fma(a[i][p], b[p][j], acc) for p = 0, 1, ...
float chain(const float* a, const float* b, int64_t ldb, int64_t j, int64_t k, float acc) {
  for (int64_t p = 0; p < k; ++p) acc = std::fma(a[p], b[p * ldb + j], acc);
  return acc;
}

TEST(HfKernels, MatmulNnAccIsOneChainPerElementOnBothPaths) {
  Avx2Guard guard;
  // Shapes with column tails (n % 8, n % 16, n % 24, n % 48) and row tails (m % 4), strided
  // operands.
  for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1},
                         {5, 7, 3},
                         {4, 24, 64},
                         {9, 61, 17},
                         {3, 100, 130},
                         {6, 40, 9},
                         {64, 64, 250}}) {
    const int64_t lda = k + 3, ldb = n + 5, ldc = n + 2;
    auto a = randn(m * lda, 1), b = randn(k * ldb, 2), c0 = randn(m * ldc, 3);
    // AVX-512 (where the CPU has it), AVX2, portable.
    for (const int path : {2, 1, 0}) {
      set_avx2_for_testing(path >= 1);
      set_avx512_for_testing(path == 2);
      if (path == 2 && !using_avx512()) continue;
      const int avx2 = path;
      auto c = c0;
      matmul_nn_acc(a.data(), lda, b.data(), ldb, c.data(), ldc, m, n, k);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
          const float want = j < n ? chain(a.data() + i * lda, b.data(), ldb, j, k, c0[i * ldc + j])
                                   : c0[i * ldc + j];
          ASSERT_TRUE(same_bits(c[i * ldc + j], want))
              << m << "x" << n << "x" << k << " at " << i << "," << j << " path " << avx2;
        }
      // k split into two calls, and zero rows of A appended: the same bits.
      auto split = c0;
      const int64_t k1 = k / 3;
      matmul_nn_acc(a.data(), lda, b.data(), ldb, split.data(), ldc, m, n, k1);
      matmul_nn_acc(a.data() + k1, lda, b.data() + k1 * ldb, ldb, split.data(), ldc, m, n, k - k1);
      EXPECT_EQ(std::memcmp(split.data(), c.data(), c.size() * sizeof(float)), 0);
    }
  }
}

// The dot product's lanes, written out: lane l takes the indices congruent to l mod 8 in
// increasing order, and the lanes are added ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
float lanes_dot(const float* a, const float* b, int64_t k) {
  float l[8] = {};
  for (int64_t p = 0; p < k; ++p) l[p % 8] = std::fma(a[p], b[p], l[p % 8]);
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

TEST(HfKernels, MatmulNtIsTheLanesDotOfEachElementOnBothPaths) {
  Avx2Guard guard;
  // Reductions with masked tails (k % 8), row tails (m % 4) and column tails (n % 3).
  for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1},
                         {5, 7, 3},
                         {4, 6, 8},
                         {9, 13, 13},
                         {3, 10, 37},
                         {8, 31, 250}}) {
    const int64_t lda = k + 3, ldw = k + 1, ldc = n + 2;
    auto a = randn(m * lda, 4), w = randn(n * ldw, 5), bias = randn(n, 6);
    for (bool avx2 : {true, false}) {
      set_avx2_for_testing(avx2);
      std::vector<float> c(m * ldc, -7.0f);
      matmul_nt(a.data(), lda, w.data(), ldw, bias.data(), c.data(), ldc, m, n, k);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
          const float want =
              j < n ? lanes_dot(a.data() + i * lda, w.data() + j * ldw, k) + bias[j] : -7.0f;
          ASSERT_TRUE(same_bits(c[i * ldc + j], want))
              << m << "x" << n << "x" << k << " at " << i << "," << j << " avx2 " << avx2;
        }
    }
  }
}

TEST(HfKernels, ZeroWeightsLeaveTheChainExactly) {
  // Masked attention probabilities: a row padded with zero coefficients over more keys.
  const int64_t k = 37, pad = 27, n = 16;
  auto a = randn(k, 4), b = randn((k + pad) * n, 5);
  std::vector<float> a_pad(a);
  a_pad.resize(k + pad, 0.0f);
  std::vector<float> c1(n, 0.0f), c2(n, 0.0f);
  matmul_nn_acc(a.data(), k, b.data(), n, c1.data(), n, 1, n, k);
  matmul_nn_acc(a_pad.data(), k + pad, b.data(), n, c2.data(), n, 1, n, k + pad);
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), sizeof(float) * n), 0);
}

TEST(HfKernels, ExpShiftedMatchesStdExpAndBothPathsAgree) {
  Avx2Guard guard;
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) x.push_back(-90.0f + 90.0f * static_cast<float>(i) / 20000.0f);
  for (float v : {0.0f, -0.0f, -1e-30f, -87.0f, -87.3f, -87.4f, -200.0f, 1.0f, 10.0f, 80.0f})
    x.push_back(v);
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::nanf(""));
  for (bool avx2 : {true, false}) {
    set_avx2_for_testing(avx2);
    for (float shift : {0.0f, 2.5f}) {
      auto y = x;
      exp_shifted(y.data(), static_cast<int64_t>(y.size()), shift);
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(static_cast<double>(x[i] - shift));
        if (std::isnan(x[i])) {
          EXPECT_TRUE(std::isnan(y[i]));
        } else if (x[i] - shift < -87.33654f) {  // below FLT_MIN: 0
          EXPECT_EQ(y[i], 0.0f) << x[i];
        } else {
          EXPECT_LE(std::abs(y[i] - want), 3e-7 * want) << x[i] << " shift " << shift;
        }
      }
      // Every element by the same operations, whatever its place: a shifted copy agrees.
      auto z = std::vector<float>(x.begin() + 3, x.end());
      exp_shifted(z.data(), static_cast<int64_t>(z.size()), shift);
      for (size_t i = 0; i < z.size(); ++i)
        ASSERT_TRUE(same_bits(z[i], y[i + 3]) || std::isnan(z[i])) << i;
    }
  }
  // Both paths: the same bits.
  auto p = x, q = x;
  set_avx2_for_testing(true);
  exp_shifted(p.data(), static_cast<int64_t>(p.size()), 0.5f);
  set_avx2_for_testing(false);
  exp_shifted(q.data(), static_cast<int64_t>(q.size()), 0.5f);
  for (size_t i = 0; i < p.size(); ++i)
    ASSERT_TRUE(same_bits(p[i], q[i]) || (std::isnan(p[i]) && std::isnan(q[i]))) << x[i];
}

TEST(HfKernels, ExpShiftedSumIsExpShiftedAndSumOnBothPaths) {
  Avx2Guard guard;
  auto x = randn(1001, 11);  // one past the longest n: not written
  x[20] = -100.0f;           // below the polynomial's range: 0
  for (int64_t n : {1, 7, 8, 9, 16, 17, 24, 31, 32, 45, 1000}) {
    // Independent: the sum of std::exp in double.
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += std::exp(static_cast<double>(x[i]) - 0.75);
    std::vector<float> first;
    // AVX-512 (where the CPU has it), AVX2, portable.
    for (const int path : {2, 1, 0}) {
      set_avx2_for_testing(path >= 1);
      set_avx512_for_testing(path == 2);
      if (path == 2 && !using_avx512()) continue;
      auto y = x, z = x;
      const float got = exp_shifted_sum(y.data(), n, 0.75f);
      exp_shifted(z.data(), n, 0.75f);
      EXPECT_LE(std::abs(got - want), (n > 45 ? 1e-5 : 1e-6) * want) << n;
      EXPECT_TRUE(same_bits(got, sum(z.data(), n))) << n;  // the elements of exp_shifted, summed
      EXPECT_EQ(std::memcmp(y.data(), z.data(), sizeof(float) * n), 0) << n;
      EXPECT_TRUE(same_bits(y[n], x[n])) << "wrote past n = " << n;
      if (first.empty())
        first.assign(y.begin(), y.begin() + n);
      else
        EXPECT_EQ(std::memcmp(first.data(), y.data(), sizeof(float) * n), 0) << n;
    }
  }
}

// The order of the additions, on vectors where it shows: one in five of these sums of 64 rounds
// differently when a step of 16 adds its upper eight elements before its lower eight.
TEST(HfKernels, ExpShiftedSumAddsInTheOrderOfSumOnEveryPath) {
  Avx2Guard guard;
  for (int trial = 0; trial < 100; ++trial) {
    auto x = randn(64, 100 + trial);
    for (float& v : x) v *= 3.0f;  // exponentials over several powers of two
    auto z = x;
    exp_shifted(z.data(), 64, 0.0f);
    const float want = sum(z.data(), 64);
    for (const int path : {2, 1, 0}) {
      set_avx2_for_testing(path >= 1);
      set_avx512_for_testing(path == 2);
      if (path == 2 && !using_avx512()) continue;
      auto y = x;
      ASSERT_TRUE(same_bits(exp_shifted_sum(y.data(), 64, 0.0f), want))
          << "trial " << trial << ", path " << path;
    }
  }
}

TEST(HfKernels, SoftmaxMatchesDoublePrecision) {
  const auto x = randn(37, 12);
  for (int64_t n : {1, 5, 8, 37}) {
    auto y = x;
    softmax(y.data(), n);
    double m = x[0], total = 0;
    for (int64_t i = 1; i < n; ++i) m = std::max<double>(m, x[i]);
    for (int64_t i = 0; i < n; ++i) total += std::exp(x[i] - m);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(y[i], std::exp(x[i] - m) / total, 1e-6) << n << " " << i;
  }
}

// decode_attention passes the largest score it found while writing them: the same bits as
// softmax, which looks for it.
TEST(HfKernels, SoftmaxWithMaxIsSoftmax) {
  const auto x = randn(37, 13);
  for (int64_t n : {1, 5, 8, 37}) {
    auto want = x, got = x;
    softmax(want.data(), n);
    softmax_with_max(got.data(), n, max(x.data(), n));
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], want[i]) << n << " " << i;
  }
}

TEST(HfKernels, MaxOfRows) {
  auto x = randn(37, 6);
  for (int64_t n : {1, 7, 8, 9, 37}) {
    float want = x[0];
    for (int64_t i = 1; i < n; ++i) want = std::max(want, x[i]);
    EXPECT_EQ(max(x.data(), n), want);
  }
}

}  // namespace
}  // namespace lmeval::hf::kernels

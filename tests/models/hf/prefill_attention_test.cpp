// prefill_attention (prefill_attention.hpp) against the eager attention it replaces, written out
// with ATen in float64: scores scaled after the product, each query's keys from its window or
// chunk start to its own position, softmax, the values' weighted sum.
#include "models/hf/prefill_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace lmeval::hf {
namespace {

at::Tensor eager(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t past,
                 int64_t window, int64_t chunk, double scale) {
  const int64_t H = q.size(1), T = q.size(2), KV = k.size(1), S = k.size(2);
  const at::Tensor kk = k.to(at::kDouble).repeat_interleave(H / KV, 1);
  const at::Tensor vv = v.to(at::kDouble).repeat_interleave(H / KV, 1);
  at::Tensor s = at::matmul(q.to(at::kDouble), kk.transpose(-1, -2)) * scale;  // [1, H, T, S]
  at::Tensor allow = at::zeros({1, 1, T, S}, at::kBool);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t p = past + t;
    const int64_t lo = chunk > 0    ? p / chunk * chunk
                       : window > 0 ? std::max<int64_t>(0, p - window + 1)
                                    : 0;
    allow[0][0][t].narrow(0, lo, p - lo + 1).fill_(true);
  }
  s = s.masked_fill(allow.logical_not(), -INFINITY);
  return at::matmul(at::softmax(s, -1), vv);
}

struct Case {
  int64_t H, KV, T, past, qk, vd, window, chunk;
};

TEST(PrefillAttention, MatchesTheEagerCausalAttention) {
  at::manual_seed(11);
  // Blocks of 64 queries and their tails, keys before the prompt (a shared prefix), grouped
  // heads, head sizes off the vector width, sliding windows and chunks across block borders.
  for (const Case& c : {Case{4, 4, 150, 0, 64, 64, 0, 0}, Case{8, 2, 70, 33, 8, 8, 0, 0},
                        Case{6, 3, 129, 0, 12, 20, 0, 0}, Case{4, 1, 100, 10, 16, 16, 37, 0},
                        Case{2, 2, 90, 5, 32, 32, 0, 40}, Case{2, 1, 2, 0, 8, 8, 0, 0}}) {
    const int64_t S = c.past + c.T, cap = S + 7;
    const at::Tensor q = at::randn({1, c.H, c.T, c.qk});
    // Views of a larger cache, as a slot's first S positions are.
    const at::Tensor k = at::randn({1, c.KV, cap, c.qk}).narrow(2, 0, S);
    const at::Tensor v = at::randn({1, c.KV, cap, c.vd}).narrow(2, 0, S);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.qk));
    const at::Tensor got = prefill_attention(q, k, v, c.past, c.window, c.chunk, scale);
    ASSERT_TRUE(got.defined());
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{1, c.H, c.T, c.vd}));
    const at::Tensor want = eager(q, k, v, c.past, c.window, c.chunk, scale);
    EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 1e-5)
        << "H " << c.H << " KV " << c.KV << " T " << c.T << " past " << c.past << " window "
        << c.window << " chunk " << c.chunk;
  }
}

TEST(PrefillAttention, LeavesOtherShapesAndTypesToTheGeneralPath) {
  const auto r = [](int64_t b, int64_t t) { return at::randn({b, 2, t, 8}); };
  EXPECT_FALSE(prefill_attention(r(2, 5), r(2, 5), r(2, 5), 0, 0, 0, 1.0).defined());  // 2 rows
  EXPECT_FALSE(prefill_attention(r(1, 1), r(1, 4), r(1, 4), 3, 0, 0, 1.0).defined());  // a step
  EXPECT_FALSE(prefill_attention(r(1, 5).to(at::kBFloat16), r(1, 5).to(at::kBFloat16),
                                 r(1, 5).to(at::kBFloat16), 0, 0, 0, 1.0)
                   .defined());
  EXPECT_FALSE(prefill_attention(r(1, 5), r(1, 6), r(1, 6), 0, 0, 0, 1.0).defined());  // S != T
}

}  // namespace
}  // namespace lmeval::hf

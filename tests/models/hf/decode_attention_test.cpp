// decode_attention (decode_attention.hpp) against the eager attention it replaces, written
// out with ATen: scores scaled after the product, keys outside each row's range masked, softmax,
// the values' weighted sum.
#include "models/hf/decode_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace lmeval::hf {
namespace {

at::Tensor eager(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                 const std::vector<int64_t>& first, const std::vector<int64_t>& last,
                 double scale) {
  const int64_t B = q.size(0), H = q.size(1), KV = k.size(1), S = k.size(2);
  const at::Tensor kk = k.repeat_interleave(H / KV, 1), vv = v.repeat_interleave(H / KV, 1);
  at::Tensor s = at::matmul(q, kk.transpose(-1, -2)) * scale;  // [B, H, 1, S]
  at::Tensor allow = at::zeros({B, 1, 1, S}, at::kBool);
  for (int64_t b = 0; b < B; ++b) allow[b].narrow(-1, first[b], last[b] - first[b] + 1).fill_(true);
  s = s.masked_fill(allow.logical_not(), -INFINITY);
  return at::matmul(at::softmax(s, -1), vv);
}

TEST(DecodeAttention, MatchesTheEagerAttentionOnEachRowsOwnKeys) {
  at::manual_seed(7);
  const int64_t H = 8, cap = 40, S = 33;
  // 5 rows: tasks of two heads of one key/value head; 16 rows: tasks of all eight heads, whose
  // four key/value heads' streams are scored side by side where heads are 8 dimensions.
  for (const auto [B, KV] : {std::pair<int64_t, int64_t>{5, 2}, {16, 4}}) {
    // Rows of their own lengths, some with a sliding window, one with a single key.
    std::vector<int64_t> first = {0, 0, 20, 0, 12}, last = {32, 10, 32, 0, 12};
    for (int64_t b = 5; b < B; ++b) {
      last.push_back(S - 1 - b % 7);
      first.push_back(b % 3 == 0 ? b : 0);
    }
    for (const auto [qk, vd] : {std::pair<int64_t, int64_t>{8, 8}, {16, 16}, {64, 32}, {64, 128}}) {
      const at::Tensor q = at::randn({B, H, 1, qk});
      // Views of a larger pool, as the slot pool's first S positions are.
      const at::Tensor k = at::randn({B, KV, cap, qk}).narrow(2, 0, S);
      const at::Tensor v = at::randn({B, KV, cap, vd}).narrow(2, 0, S);
      const at::Tensor got = decode_attention(q, k, v, first, last, 1.0 / std::sqrt(qk));
      if (!got.defined()) GTEST_SKIP() << "this CPU has no AVX2/FMA: the general path runs";
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{B, H, 1, vd}));
      const at::Tensor want = eager(q, k, v, first, last, 1.0 / std::sqrt(qk));
      EXPECT_LT((got - want).abs().max().item<float>(), 1e-5)
          << B << " rows, qk " << qk << " vd " << vd;
    }
  }
}

TEST(DecodeAttention, LeavesOtherShapesAndTypesToTheGeneralPath) {
  const std::vector<int64_t> first = {0}, last = {3};
  EXPECT_FALSE(decode_attention(at::randn({1, 2, 1, 12}), at::randn({1, 2, 4, 12}),
                                at::randn({1, 2, 4, 12}), first, last, 1.0)
                   .defined());  // head size not a multiple of 8
  EXPECT_FALSE(decode_attention(at::randn({1, 2, 1, 8}).to(at::kDouble),
                                at::randn({1, 2, 4, 8}).to(at::kDouble),
                                at::randn({1, 2, 4, 8}).to(at::kDouble), first, last, 1.0)
                   .defined());
}

}  // namespace
}  // namespace lmeval::hf

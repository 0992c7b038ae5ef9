// decode_attention (decode_attention.hpp) against the eager attention it replaces, written
// out with ATen: scores scaled after the product, keys outside each row's range masked, softmax,
// the values' weighted sum.
#include "models/hf/decode_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "models/hf/kernels.hpp"

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

// The same attention written out one element at a time with the kernels' own primitives: each
// score kernels::dot times the scale, each row kernels::softmax, each output element one fused
// multiply-add chain over the row's keys in increasing order. decode_attention's vector paths
// (heads side by side, keys in blocks, probabilities interleaved by head) must give these bits.
at::Tensor written_out(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::vector<int64_t>& first, const std::vector<int64_t>& last,
                       double scale) {
  const int64_t B = q.size(0), H = q.size(1), KV = k.size(1), qk = q.size(3), vd = v.size(3);
  at::Tensor out = at::empty({B, H, 1, vd});
  const at::Tensor kc = k.contiguous(), vc = v.contiguous();
  const auto va = vc.accessor<float, 4>();
  auto oa = out.accessor<float, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / KV), n = last[b] - first[b] + 1;
      std::vector<float> p(static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t)
        p[t] = kernels::dot(q[b][h][0].data_ptr<float>(), kc[b][g][first[b] + t].data_ptr<float>(),
                            qk) *
               static_cast<float>(scale);
      kernels::softmax(p.data(), n);
      for (int64_t e = 0; e < vd; ++e) {
        float acc = 0;
        for (int64_t t = 0; t < n; ++t) acc = std::fma(p[t], va[b][g][first[b] + t][e], acc);
        oa[b][h][0][e] = acc;
      }
    }
  return out;
}

TEST(DecodeAttention, GivesTheBitsOfTheWrittenOutAttention) {
  at::manual_seed(11);
  const int64_t cap = 48, S = 45;
  const bool avx512 = kernels::using_avx512();
  // Batches of 2 and 24 rows (tasks of a few heads, or of all eight), 8, 4, 2 and 1 key/value
  // heads (GQA groups of 1..8 query heads), heads of 8 and of 16 dimensions; the AVX-512 scores
  // of 8-dimension heads and the AVX2 ones, where the CPU has AVX-512.
  for (const bool wide : {false, true})
    for (const int64_t B : {2, 24})
      for (const int64_t KV : {8, 4, 2, 1})
        for (const int64_t hd : {8, 16}) {
          std::vector<int64_t> first, last;
          for (int64_t b = 0; b < B; ++b) {
            last.push_back(S - 1 - b % 11);  // lengths past and short of a block of eight keys
            first.push_back(b % 4 == 1 ? b % 9 : 0);
          }
          const at::Tensor q = at::randn({B, 8, 1, hd});
          const at::Tensor k = at::randn({B, KV, cap, hd}).narrow(2, 0, S);
          const at::Tensor v = at::randn({B, KV, cap, hd}).narrow(2, 0, S);
          kernels::set_avx512_for_testing(wide);
          if (wide && !kernels::using_avx512()) continue;  // no AVX-512 here: the AVX2 run holds
          const at::Tensor got = decode_attention(q, k, v, first, last, 1.0 / std::sqrt(hd));
          kernels::set_avx512_for_testing(avx512);
          if (!got.defined()) GTEST_SKIP() << "this CPU has no AVX2/FMA: the general path runs";
          const at::Tensor want = written_out(q, k, v, first, last, 1.0 / std::sqrt(hd));
          EXPECT_TRUE(at::equal(got, want))
              << (wide ? "AVX-512, " : "AVX2, ") << B << " rows, " << KV << " kv heads of " << hd
              << ": largest difference " << (got - want).abs().max().item<float>();
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

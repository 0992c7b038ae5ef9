// The batch-invariant float32 forward (prefix_forward.cpp) over rows longer than one attention
// query block: against the float64 ATen path (an independent implementation of the same
// model), and bit for bit across batches, prefixes and prefix sharing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

#include "models/hf/hf_lm.hpp"
#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;

// Random token ids after BOS: rows of any length without a tokenizer.
std::vector<Token> random_ids(int64_t n, int64_t vocab, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<Token> d(3, static_cast<Token>(vocab - 1));
  std::vector<Token> ids = {1};
  while (static_cast<int64_t>(ids.size()) < n) ids.push_back(d(g));
  return ids;
}

struct LongCase {
  std::string name;
  fs::path dir;  // under ../shared
};

class LongRowsTest : public ::testing::TestWithParam<LongCase> {};

// Rows of up to 250 tokens: four query blocks of 64; mistral and gemma2 have a 128-token
// sliding window (gemma2 on alternate layers, with attention soft-capping too).
TEST_P(LongRowsTest, MatchFloat64AndKeepTheirBitsInAnyBatch) {
  const fs::path dir = lmeval::testing::shared_dir() / GetParam().dir;
  LMEVAL_REQUIRE_SHARED((GetParam().dir / "config.json").string());
  auto m32 = Transformer::load(dir, {});
  LoadOptions f64;
  f64.dtype = "float64";
  auto m64 = Transformer::load(dir, f64);
  const int64_t V = m32->config().vocab_size;
  const int64_t T = std::min<int64_t>(250, m32->config().max_position_embeddings.value_or(250));
  const auto ids = random_ids(T, V, 7);
  const auto lp = m32->full_logprobs({ids}, {}, {});
  const auto want = m64->full_logprobs({ids}, {}, {});
  ASSERT_EQ(lp.size(), want.size());
  double d = 0;
  for (size_t i = 0; i < lp.size(); ++i) d = std::max(d, std::abs(double{lp[i]} - want[i]));
  EXPECT_LT(d, 1e-4) << GetParam().name;
  // A prefix alone (other query blocks, fewer keys) gives its rows the same bits.
  for (int64_t n : {1, 63, 64, 65, 129, 200}) {
    if (n > T) continue;
    const std::vector<Token> head(ids.begin(), ids.begin() + n);
    const auto part = m32->full_logprobs({head}, {}, {});
    for (int64_t i = 0; i < n * V; ++i) ASSERT_EQ(part[i], lp[i]) << "prefix of " << n;
  }
  // In a batch with another row: the same bits.
  const auto other = random_ids(T, V, 8);
  const auto both = m32->full_logprobs({other, ids}, {}, {});
  for (int64_t i = 0; i < T * V; ++i) ASSERT_EQ(both[T * V + i], lp[i]) << "batched";
}

INSTANTIATE_TEST_SUITE_P(HfLongRows, LongRowsTest,
                         ::testing::Values(LongCase{"stories260K", "models/stories260K"},
                                           LongCase{"mistral", "fixtures/mistral"},
                                           LongCase{"gemma2", "fixtures/gemma2"}),
                         [](const auto& info) { return info.param.name; });

// Long shared contexts through HFLM: continuations scored with the context shared (its keys
// attended across the parent/child split) or fed again, in batches of any size: equal bits.
TEST(HfLongRows, SharedLongContextsScoreTheSameInEveryBatch) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  Json args = {{"pretrained", (lmeval::testing::shared_dir() / "models" / "stories260K").string()},
               {"device", "cpu"}};
  auto lm = std::make_unique<HFLM>(parse_hf_args(args, {}));
  std::string ctx;
  for (int i = 0; i < 12; ++i)
    ctx += "Once upon a time, there was a little girl named Lily. She liked to play. ";
  ASSERT_GT(lm->tok_encode(ctx).size(), 200u);
  std::vector<LoglikelihoodRequest> reqs;
  for (const char* c : {" a", " She went to the park with her mom and dad.", " The end."})
    for (size_t cut : {ctx.size(), ctx.size() / 2, ctx.size() / 3})
      reqs.push_back({ctx.substr(0, cut), c});
  lm->set_fixed_batch_rows(1);
  lm->set_prefix_sharing(false);
  const auto one = lm->loglikelihood(reqs);
  for (bool share : {false, true})
    for (int64_t rows : {1, 4, 64}) {
      lm->set_prefix_sharing(share);
      lm->set_fixed_batch_rows(rows);
      const auto got = lm->loglikelihood(reqs);
      for (size_t i = 0; i < reqs.size(); ++i) {
        EXPECT_EQ(got[i].loglikelihood, one[i].loglikelihood)
            << "request " << i << ", sharing " << share << ", " << rows << " rows";
        EXPECT_EQ(got[i].is_greedy, one[i].is_greedy);
      }
    }
}

}  // namespace
}  // namespace lmeval::hf

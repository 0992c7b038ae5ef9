// few_rows_linear (few_rows_linear.hpp) against nn.Linear computed in float64 with ATen, and
// the batch invariance it brings: a row's outputs are the same bits whatever rows share its call.
#include "models/hf/few_rows_linear.hpp"

#include <gtest/gtest.h>

namespace lmeval::hf {
namespace {

TEST(FewRowsLinear, MatchesLinearUpToItsRowLimit) {
  at::manual_seed(3);
  for (const int64_t rows : {int64_t{1}, int64_t{3}, int64_t{8}, kFewRows}) {
    for (const bool bias : {false, true}) {
      const at::Tensor x = at::randn({rows, 1, 77});  // [B, T = 1, in]: a decoding step
      const at::Tensor w = at::randn({131, 77});
      const at::Tensor b = bias ? at::randn({131}) : at::Tensor();
      const at::Tensor got = few_rows_linear(x, w, b);
      ASSERT_TRUE(got.defined()) << rows << " rows";
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{rows, 1, 131}));
      const at::Tensor want =
          at::linear(x.to(at::kDouble), w.to(at::kDouble), bias ? b.to(at::kDouble) : b);
      EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 1e-4)
          << rows << " rows, bias " << bias;
    }
  }
}

TEST(FewRowsLinear, ARowsOutputsDoNotDependOnItsNeighbours) {
  at::manual_seed(4);
  const at::Tensor x = at::randn({kFewRows, 200}), w = at::randn({50, 200});
  const at::Tensor all = few_rows_linear(x, w, {});
  for (const int64_t r : {int64_t{0}, int64_t{5}, kFewRows - 1}) {
    const at::Tensor alone = few_rows_linear(x.narrow(0, r, 1), w, {});
    EXPECT_TRUE(at::equal(alone[0], all[r])) << "row " << r;
  }
}

TEST(FewRowsLinear, LeavesOtherProductsToTheGeneralPath) {
  const at::Tensor w = at::randn({6, 4});
  EXPECT_FALSE(few_rows_linear(at::randn({kFewRows + 1, 4}), w, {}).defined());  // many rows
  EXPECT_FALSE(few_rows_linear(at::randn({2, 4}).to(at::kDouble), w.to(at::kDouble), {}).defined());
  EXPECT_FALSE(few_rows_linear(at::randn({2, 4}), at::randn({4, 6}).t(), {}).defined());  // strided
  EXPECT_FALSE(few_rows_linear(at::randn({2, 4}).to(at::kBFloat16), w, {}).defined());
}

}  // namespace
}  // namespace lmeval::hf

// Holm and Benjamini-Hochberg adjusted p-values against statsmodels' multipletests
// (tests/stats/goldens/inference.json, scripts/gen_inference_goldens.py).
#include "lmeval/stats/multiple_testing.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/paired_goldens.hpp"

using lmeval::testing::inference_goldens;
using lmeval::testing::near_golden;

TEST(MultipleTesting, HolmAndBhMatchStatsmodels) {
  const auto& cases = inference_goldens()["multipletests"];
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    const auto p = c["p"].get<std::vector<double>>();
    const auto holm = lmeval::stats::holm_adjusted(p);
    const auto bh = lmeval::stats::bh_adjusted(p);
    ASSERT_EQ(holm.size(), p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(near_golden(holm[i], c["holm"][i])) << i;
      EXPECT_TRUE(near_golden(bh[i], c["fdr_bh"][i])) << i;
    }
  }
}

TEST(MultipleTesting, UndefinedPValuesStayOutOfTheFamily) {
  const auto holm = lmeval::stats::holm_adjusted({0.01, std::nan(""), 0.04});
  EXPECT_NEAR(holm[0], 0.02, 1e-15);  // a family of two, not three
  EXPECT_TRUE(std::isnan(holm[1]));
  EXPECT_NEAR(holm[2], 0.04, 1e-15);
}

// Kendall's tau-b against scipy.stats.kendalltau (tests/stats/goldens/inference.json,
// scripts/gen_inference_goldens.py), ties included.
#include "lmeval/stats/rank_correlation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/paired_goldens.hpp"

TEST(RankCorrelation, KendallTauBMatchesScipy) {
  const auto& cases = lmeval::testing::inference_goldens()["kendall"];
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases)
    EXPECT_TRUE(lmeval::testing::near_golden(
        lmeval::stats::kendall_tau_b(c["x"].get<std::vector<double>>(),
                                     c["y"].get<std::vector<double>>()),
        c["tau"]))
        << c.dump();
}

TEST(RankCorrelation, ConstantScoresAreUndefined) {
  EXPECT_TRUE(std::isnan(lmeval::stats::kendall_tau_b({0, 1, 2}, {0.3, 0.3, 0.3})));
}

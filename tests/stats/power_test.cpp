// Power and sample size (lm-eval power) against statsmodels' NormalIndPower with ratio=0
// (tests/stats/goldens/inference.json, scripts/gen_inference_goldens.py).
#include "lmeval/stats/power.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/paired_goldens.hpp"

using lmeval::testing::inference_goldens;

TEST(Power, PowerAndItemsNeededMatchStatsmodels) {
  const auto& cases = inference_goldens()["power"];
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dump());
    const double d = c["d"], sd = c["sd"], n = c["n"], alpha = c["alpha"], power = c["power"];
    EXPECT_NEAR(lmeval::stats::power_of_test(d, sd / std::sqrt(n), alpha),
                c["power_at_n"].get<double>(), 1e-9);
    // statsmodels' solver stops at its own tolerance: agree to 1e-6 relative.
    const double want = c["items_needed"];
    EXPECT_NEAR(lmeval::stats::items_needed(d, sd, alpha, power), want, 1e-6 * want);
  }
}

TEST(Power, ItemsNeededGivesThePowerAskedFor) {
  const double n = lmeval::stats::items_needed(0.02, 0.4);
  EXPECT_NEAR(lmeval::stats::power_of_test(0.02, 0.4 / std::sqrt(n)), 0.8, 1e-12);
}

TEST(Power, ZeroSpreadIsUndefined) {
  EXPECT_TRUE(std::isnan(lmeval::stats::items_needed(0.02, 0)));
  EXPECT_TRUE(std::isnan(lmeval::stats::items_needed(0, 0.3)));
  EXPECT_TRUE(std::isnan(lmeval::stats::power_of_test(0.02, 0)));
}

TEST(Power, ConservativeStderrIsTheLarger) {
  EXPECT_EQ(lmeval::stats::conservative_stderr(0.02, 0.015), 0.02);
  EXPECT_EQ(lmeval::stats::conservative_stderr(0.02, 0.03), 0.03);
  EXPECT_EQ(lmeval::stats::conservative_stderr(0.02, std::nan("")), 0.02);
}

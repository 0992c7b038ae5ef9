// Wilson and t intervals, percentiles, cluster-robust standard errors and minimum detectable
// differences against statsmodels / scipy / numpy (tests/stats/goldens/intervals.json), to 1e-9.
#include <gtest/gtest.h>

#include <cmath>

#include "lmeval/stats/clustered.hpp"
#include "lmeval/stats/intervals.hpp"
#include "lmeval/stats/power.hpp"
#include "stats/golden_support.hpp"

namespace lmeval::stats {
namespace {

using testing::close;
using testing::goldens;

TEST(Intervals, WilsonMatchesStatsmodels) {
  ASSERT_GE(goldens()["wilson"].size(), 20u);
  for (const auto& r : goldens()["wilson"]) {
    Interval ci = wilson_interval(r[0], r[1], r[2]);
    const double lo = r[3], hi = r[4];
    // statsmodels returns exactly 0 / 1 at the ends, where our formula can leave 1 ulp.
    EXPECT_NEAR(ci.low, lo, 1e-9 * std::max(1e-3, std::fabs(lo))) << r.dump();
    EXPECT_TRUE(close(ci.high, hi, 1e-9)) << r.dump();
  }
}

TEST(Intervals, ClopperPearsonMatchesStatsmodels) {
  ASSERT_GE(goldens()["clopper_pearson"].size(), 20u);
  for (const auto& r : goldens()["clopper_pearson"]) {
    Interval ci = clopper_pearson_interval(r[0], r[1], r[2]);
    EXPECT_TRUE(close(ci.low, r[3], 1e-9)) << r.dump();
    EXPECT_TRUE(close(ci.high, r[4], 1e-9)) << r.dump();
  }
}

TEST(Intervals, TIntervalMatchesScipy) {
  for (const auto& r : goldens()["t_interval"]) {
    Interval ci = t_interval(r[0], r[1], r[2], r[3]);
    EXPECT_TRUE(close(ci.low, r[4], 1e-9)) << r.dump();
    EXPECT_TRUE(close(ci.high, r[5], 1e-9)) << r.dump();
  }
}

TEST(Intervals, PercentileMatchesNumpy) {
  for (const auto& c : goldens()["percentile"]) {
    Interval ci = percentile_interval(c["xs"].get<std::vector<double>>(), c["confidence"]);
    EXPECT_TRUE(close(ci.low, c["low"], 1e-12)) << c["xs"].size();
    EXPECT_TRUE(close(ci.high, c["high"], 1e-12)) << c["xs"].size();
  }
  EXPECT_TRUE(std::isnan(percentile_interval({}).low));
}

TEST(Clustered, MatchesStatsmodelsCR1) {
  ASSERT_GE(goldens()["clustered"].size(), 5u);
  for (const auto& c : goldens()["clustered"]) {
    auto se = clustered_stderr(c["xs"].get<std::vector<double>>(),
                               c["clusters"].get<std::vector<std::string>>());
    EXPECT_TRUE(close(se.stderr, c["stderr"], 1e-9)) << c["name"];
    EXPECT_EQ(se.n_clusters, c["n_clusters"].get<size_t>()) << c["name"];
  }
}

TEST(Clustered, OneClusterHasNoStderr) {
  auto se = clustered_stderr({1, 0, 1}, {"a", "a", "a"});
  EXPECT_EQ(se.n_clusters, 1u);
  EXPECT_TRUE(std::isnan(se.stderr));
  EXPECT_TRUE(std::isnan(clustered_stderr({1, 0}, {"a"}).stderr));
}

TEST(Power, MinimumDetectableDifferenceMatchesScipyRoot) {
  ASSERT_GE(goldens()["mde"].size(), 10u);
  for (const auto& r : goldens()["mde"]) {
    const double se = difference_stderr(r[1], r[0].get<size_t>());
    EXPECT_TRUE(close(minimum_detectable_difference(se, r[2], r[3]), r[4], 1e-9)) << r.dump();
  }
}

TEST(Power, CorrelationShrinksTheDifferenceStderr) {
  EXPECT_DOUBLE_EQ(difference_stderr(0.5, 200, 0.75), 0.5 * std::sqrt(2 * 0.25 / 200));
  EXPECT_TRUE(std::isnan(minimum_detectable_difference(0.1, 0.05, 1.5)));
}

}  // namespace
}  // namespace lmeval::stats

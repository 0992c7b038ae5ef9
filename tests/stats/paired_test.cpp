// McNemar's exact test, the paired t-test, the clustered paired difference and the minimum
// detectable difference against statsmodels and scipy (tests/stats/goldens/paired.json).
#include "lmeval/stats/paired.hpp"

#include <gtest/gtest.h>

#include "lmeval/stats/power.hpp"
#include "stats/paired_goldens.hpp"

using lmeval::testing::near_golden;
using lmeval::testing::paired_goldens;

TEST(Paired_McNemar, MatchesStatsmodelsExact) {
  for (const auto& c : paired_goldens()["mcnemar"]) {
    EXPECT_TRUE(near_golden(lmeval::stats::mcnemar_exact_p(c["b"], c["c"]), c["p"])) << c.dump();
  }
}

TEST(Paired_McNemar, SymmetricAndBounded) {
  EXPECT_DOUBLE_EQ(lmeval::stats::mcnemar_exact_p(4, 9), lmeval::stats::mcnemar_exact_p(9, 4));
  EXPECT_LE(lmeval::stats::mcnemar_exact_p(50000, 50000), 1.0);
  EXPECT_GT(lmeval::stats::mcnemar_exact_p(50000, 51000), 0.0);
}

TEST(Paired_T, MatchesScipyTtestRel) {
  for (const auto& c : paired_goldens()["paired_t"]) {
    const auto a = c["a"].get<std::vector<double>>();
    const auto b = c["b"].get<std::vector<double>>();
    const auto r = lmeval::stats::paired_t(a, b);
    SCOPED_TRACE("n = " + std::to_string(a.size()));
    EXPECT_TRUE(near_golden(r.diff, c["diff"]));
    EXPECT_TRUE(near_golden(r.se, c["se"]));
    EXPECT_TRUE(near_golden(r.t, c["t"]));
    EXPECT_TRUE(near_golden(r.df, c["df"]));
    EXPECT_TRUE(near_golden(r.p, c["p"]));
    EXPECT_TRUE(near_golden(r.ci_low, c["ci_low"]));
    EXPECT_TRUE(near_golden(r.ci_high, c["ci_high"]));
    EXPECT_TRUE(near_golden(lmeval::stats::pearson(a, b), c["correlation"]));
    EXPECT_TRUE(near_golden(lmeval::stats::minimum_detectable_difference(r.se), c["mde80"]));
  }
}

TEST(Paired_T, IdenticalRunsHaveNoDifference) {
  const std::vector<double> a{1, 0, 1, 1, 0};
  const auto r = lmeval::stats::paired_t(a, a);
  EXPECT_EQ(r.diff, 0);
  EXPECT_EQ(r.p, 1);
}

TEST(Paired_Clustered, MatchesStatsmodelsClusterRobustOls) {
  for (const auto& c : paired_goldens()["clustered"]) {
    std::vector<std::string> ids;
    for (const auto& id : c["cluster"]) ids.push_back("c" + id.dump());
    const auto r = lmeval::stats::clustered_paired_difference(c["a"].get<std::vector<double>>(),
                                                              c["b"].get<std::vector<double>>(), ids);
    SCOPED_TRACE("clusters = " + c["clusters"].dump());
    EXPECT_EQ(r.clusters, c["clusters"].get<std::size_t>());
    EXPECT_TRUE(near_golden(r.diff, c["diff"]));
    EXPECT_TRUE(near_golden(r.se, c["se"]));
    EXPECT_TRUE(near_golden(r.z, c["z"]));
    EXPECT_TRUE(near_golden(r.p, c["p"]));
    EXPECT_TRUE(near_golden(r.ci_low, c["ci_low"]));
    EXPECT_TRUE(near_golden(r.ci_high, c["ci_high"]));
  }
}

TEST(Paired_Clustered, OneClusterIsUndefined) {
  const auto r = lmeval::stats::clustered_paired_difference({0, 1, 1}, {1, 1, 0}, {"x", "x", "x"});
  EXPECT_TRUE(std::isnan(r.se));
  EXPECT_EQ(r.clusters, 1u);
}

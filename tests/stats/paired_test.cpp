// McNemar's exact test, the paired t-test, the clustered paired difference and the minimum
// detectable difference against statsmodels and scipy (tests/stats/goldens/paired.json).
#include "lmeval/stats/paired.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

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
  // No spread: the interval is undefined, never [0, 0].
  EXPECT_TRUE(std::isnan(r.se == 0 ? r.ci_low : 0.0));
  EXPECT_TRUE(std::isnan(r.ci_high));
}

TEST(Paired_T, ConstantShiftIsUndefinedNotSignificant) {
  // Every item moved by exactly +0.5 (exact in binary): scipy's ttest_rel gives NaN statistic and
  // p.
  const auto r = lmeval::stats::paired_t({0.25, 0.5, 0.75}, {0.75, 1.0, 1.25});
  EXPECT_NEAR(r.diff, 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(r.p));
  EXPECT_TRUE(std::isnan(r.t));
  EXPECT_TRUE(std::isnan(r.ci_low));
}

TEST(Paired_McNemarDifference, MatchesStatsmodelsExactAndClopperPearson) {
  const auto& cases = lmeval::testing::inference_goldens()["mcnemar_difference"];
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    const auto r = lmeval::stats::mcnemar_difference(c["only_a"], c["only_b"], c["n"]);
    SCOPED_TRACE(c.dump());
    EXPECT_TRUE(near_golden(r.p, c["p"]));
    EXPECT_TRUE(near_golden(r.diff, c["diff"]));
    EXPECT_TRUE(near_golden(r.ci_low, c["ci_low"]));
    EXPECT_TRUE(near_golden(r.ci_high, c["ci_high"]));
  }
}

TEST(Paired_McNemarDifference, NoDiscordantItemIsUndefined) {
  const auto r = lmeval::stats::mcnemar_difference(0, 0, 40);
  EXPECT_EQ(r.p, 1);
  EXPECT_EQ(r.diff, 0);
  EXPECT_TRUE(std::isnan(r.ci_low));
  EXPECT_TRUE(std::isnan(r.ci_high));
}

// One inference per row: over many random paired samples the interval excludes 0 exactly when
// p < 0.05, for each of the three tests (McNemar's exact, paired t, cluster-robust z or t).
TEST(Paired_Inference, IntervalExcludesZeroExactlyWhenPBelowFivePercent) {
  std::mt19937_64 gen(18);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  int significant[3] = {0, 0, 0}, cases[3] = {0, 0, 0};
  auto check = [&](int kind, double p, double lo, double hi) {
    if (std::isnan(p) || std::isnan(lo)) return;
    ++cases[kind];
    const bool excludes = lo > 0 || hi < 0;
    significant[kind] += p < 0.05;
    EXPECT_EQ(excludes, p < 0.05) << "test " << kind << " p " << p << " [" << lo << ", " << hi
                                  << "]";
  };
  for (int rep = 0; rep < 3000; ++rep) {
    const std::size_t n = 5 + static_cast<std::size_t>(u(gen) * 400);
    const double pa = u(gen), shift = (u(gen) - 0.5) * 0.4, flip = u(gen) * 0.5;
    std::vector<double> a(n), b(n), ca(n), cb(n);
    std::vector<std::string> cl(n);
    const std::size_t groups = 2 + static_cast<std::size_t>(u(gen) * 60);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = u(gen) < pa;
      b[i] = u(gen) < flip ? (u(gen) < pa + shift) : a[i];
      ca[i] = g(gen);
      cb[i] = ca[i] + shift + g(gen) * (0.2 + flip);
      cl[i] = std::to_string(static_cast<std::size_t>(u(gen) * static_cast<double>(groups)));
    }
    std::size_t only_a = 0, only_b = 0;
    for (std::size_t i = 0; i < n; ++i) {
      only_a += a[i] > b[i];
      only_b += b[i] > a[i];
    }
    const auto m = lmeval::stats::mcnemar_difference(only_a, only_b, n);
    check(0, m.p, m.ci_low, m.ci_high);
    const auto t = lmeval::stats::paired_t(ca, cb);
    check(1, t.p, t.ci_low, t.ci_high);
    const auto c = lmeval::stats::clustered_paired_difference(a, b, cl);
    check(2, c.p, c.ci_low, c.ci_high);
  }
  for (int k = 0; k < 3; ++k) {
    // Both verdicts occur often, so the property is exercised on both sides.
    EXPECT_GT(significant[k], 300) << k;
    EXPECT_GT(cases[k] - significant[k], 300) << k;
  }
}

TEST(Paired_Clustered, MatchesStatsmodelsClusterRobustOls) {
  for (const auto& c : paired_goldens()["clustered"]) {
    std::vector<std::string> ids;
    for (const auto& id : c["cluster"]) ids.push_back("c" + id.dump());
    const auto r = lmeval::stats::clustered_paired_difference(
        c["a"].get<std::vector<double>>(), c["b"].get<std::vector<double>>(), ids);
    SCOPED_TRACE("clusters = " + c["clusters"].dump());
    EXPECT_EQ(r.clusters, c["clusters"].get<std::size_t>());
    EXPECT_TRUE(near_golden(r.diff, c["diff"]));
    EXPECT_TRUE(near_golden(r.se, c["se"]));
    EXPECT_TRUE(near_golden(r.z, c["z"]));
    if (!c["df"].is_null())
      EXPECT_TRUE(near_golden(r.df, c["df"]));  // t with G − 1 df below 30 clusters
    else
      EXPECT_TRUE(std::isinf(r.df));
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

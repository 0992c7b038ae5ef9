// The resample set (CPython's random.Random(seed).choices), percentile intervals and pairwise rank
// stability, against numpy over the identical resample indices.
#include "lmeval/stats/bootstrap.hpp"

#include <gtest/gtest.h>

#include "stats/paired_goldens.hpp"

using lmeval::testing::near_golden;
using lmeval::testing::paired_goldens;
using Matrix = std::vector<std::vector<double>>;
using Counts = std::vector<std::vector<std::size_t>>;

TEST(Bootstrap_Resamples, AreCPythonRandomChoices) {
  const auto& g = paired_goldens()["bootstrap"];
  const auto items = g["scores"][0].size();
  const auto want = g["item_resamples"].get<lmeval::stats::Resamples>();
  EXPECT_EQ(lmeval::stats::draw_resamples(items, want.size(), g["seed"].get<std::int64_t>()), want);
  const auto want_c = g["cluster_resamples"].get<lmeval::stats::Resamples>();
  EXPECT_EQ(lmeval::stats::draw_resamples(want_c[0].size(), want_c.size(),
                                          g["cluster_seed"].get<std::int64_t>()),
            want_c);
}

TEST(Bootstrap_Ranks, MatchNumpyOverTheSameResamples) {
  const auto& g = paired_goldens()["bootstrap"];
  const auto scores = g["scores"].get<Matrix>();
  const auto items =
      lmeval::stats::rank_stability(scores, g["item_resamples"].get<lmeval::stats::Resamples>());
  EXPECT_EQ(items.wins, g["item_wins"].get<Counts>());
  const auto clusters = lmeval::stats::clustered_rank_stability(
      scores, g["cluster"].get<std::vector<std::size_t>>(),
      g["cluster_resamples"].get<lmeval::stats::Resamples>());
  EXPECT_EQ(clusters.wins, g["cluster_wins"].get<Counts>());
  EXPECT_EQ(items.resamples, g["item_resamples"].size());
}

TEST(Bootstrap_Interval, MatchesNumpyPercentile) {
  const auto& g = paired_goldens()["bootstrap"];
  const auto scores = g["scores"].get<Matrix>();
  std::vector<double> d(scores[0].size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = scores[3][i] - scores[0][i];
  const auto iv = lmeval::stats::bootstrap_mean_interval(
      d, g["item_resamples"].get<lmeval::stats::Resamples>());
  EXPECT_TRUE(near_golden(iv.low, g["diff_interval"][0]));
  EXPECT_TRUE(near_golden(iv.high, g["diff_interval"][1]));
  const auto civ = lmeval::stats::clustered_bootstrap_mean_interval(
      d, g["cluster"].get<std::vector<std::size_t>>(),
      g["cluster_resamples"].get<lmeval::stats::Resamples>());
  EXPECT_TRUE(near_golden(civ.low, g["diff_cluster_interval"][0]));
  EXPECT_TRUE(near_golden(civ.high, g["diff_cluster_interval"][1]));
}

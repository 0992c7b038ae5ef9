// Difficulty, point-biserial discrimination and inter-item correlations against scipy.
#include "lmeval/stats/item_analysis.hpp"

#include <gtest/gtest.h>

#include "stats/paired_goldens.hpp"

using lmeval::testing::near_golden;
using lmeval::testing::paired_goldens;

TEST(ItemAnalysis_Items, MatchScipyPointBiserial) {
  const auto& g = paired_goldens()["item_analysis"];
  const auto scores = g["scores"].get<std::vector<std::vector<double>>>();
  const auto totals = lmeval::stats::run_totals(scores);
  for (std::size_t r = 0; r < totals.size(); ++r)
    EXPECT_TRUE(near_golden(totals[r], g["totals"][r]));
  const auto items = lmeval::stats::item_statistics(scores);
  ASSERT_EQ(items.size(), g["difficulty"].size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    SCOPED_TRACE("item " + std::to_string(i));
    EXPECT_TRUE(near_golden(items[i].difficulty, g["difficulty"][i]));
    EXPECT_TRUE(near_golden(items[i].discrimination, g["discrimination"][i]));
  }
  EXPECT_TRUE(std::isnan(items[3].discrimination));  // no run right: undefined, not 0
}

TEST(ItemAnalysis_InterItem, MatchesScipyPearsonSummary) {
  const auto& g = paired_goldens()["item_analysis"];
  const auto s =
      lmeval::stats::inter_item_correlations(g["scores"].get<std::vector<std::vector<double>>>());
  const auto& w = g["inter_item"];
  EXPECT_EQ(s.pairs, w["pairs"].get<std::size_t>());
  EXPECT_EQ(s.undefined, w["undefined"].get<std::size_t>());
  EXPECT_TRUE(near_golden(s.mean, w["mean"]));
  EXPECT_TRUE(near_golden(s.min, w["min"]));
  EXPECT_TRUE(near_golden(s.q25, w["q25"]));
  EXPECT_TRUE(near_golden(s.median, w["median"]));
  EXPECT_TRUE(near_golden(s.q75, w["q75"]));
  EXPECT_TRUE(near_golden(s.max, w["max"]));
  std::size_t in_bins = 0;
  for (auto b : s.histogram) in_bins += b;
  EXPECT_EQ(in_bins, s.pairs);
}

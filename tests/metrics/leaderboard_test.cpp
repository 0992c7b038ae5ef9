// Leaderboard normalisation (spec §8.2), expected values by hand:
//   (0.6 - 0.5) / 0.5 * 100 = 20; (0.5 - 0.25) / 0.75 * 100 = 33.33...; their mean 26.66...
//   GPQA (0.4 - 0.25) / 0.75 * 100 = 20; MMLU-Pro (0.28 - 0.1) / 0.9 * 100 = 20; MATH 0.12 * 100
//   = 12.
#include <gtest/gtest.h>

#include "lmeval/metrics/leaderboard.hpp"

using lmeval::Json;

TEST(Metrics_Leaderboard, NormaliseClipsAtTheBaseline) {
  EXPECT_DOUBLE_EQ(lmeval::leaderboard_normalize(0.6, 0.5), 20.0);
  EXPECT_DOUBLE_EQ(lmeval::leaderboard_normalize(0.2, 0.25), 0.0);
  EXPECT_DOUBLE_EQ(lmeval::leaderboard_normalize(1.0, 0.25), 100.0);
}

TEST(Metrics_Leaderboard, TasksAndTheLeaderboardRulesNameTheirMetric) {
  Json rf = Json::parse(R"({"results": {
    "leaderboard_bbh_a": {"acc_norm,none": 0.6},
    "leaderboard_bbh_b": {"acc_norm,none": 0.5},
    "leaderboard_gpqa": {"acc_norm,none": 0.4},
    "leaderboard_mmlu_pro": {"acc,none": 0.28},
    "leaderboard_math_hard": {"exact_match,none": 0.12}}})");
  Json n =
      lmeval::leaderboard_normalized(rf, {{"leaderboard_bbh_a", 0.5}, {"leaderboard_bbh_b", 0.25}});
  EXPECT_NEAR(n["tasks"]["leaderboard_bbh_a"]["acc_norm,none"]["normalized"].get<double>(), 20.0,
              1e-12);
  EXPECT_NEAR(n["tasks"]["leaderboard_bbh_b"]["acc_norm,none"]["normalized"].get<double>(),
              100.0 / 3, 1e-12);
  const Json& lb = n["leaderboard"];
  EXPECT_NEAR(lb["leaderboard_bbh"]["normalized"].get<double>(), (20.0 + 100.0 / 3) / 2, 1e-12);
  EXPECT_EQ(lb["leaderboard_bbh"]["metric"], "acc_norm,none");
  EXPECT_NEAR(lb["leaderboard_gpqa"]["normalized"].get<double>(), 20.0, 1e-12);
  EXPECT_EQ(lb["leaderboard_gpqa"]["metric"], "acc_norm,none");
  EXPECT_NEAR(lb["leaderboard_mmlu_pro"]["normalized"].get<double>(), 20.0, 1e-12);
  EXPECT_EQ(lb["leaderboard_mmlu_pro"]["metric"], "acc,none");
  EXPECT_NEAR(lb["leaderboard_math_hard"]["normalized"].get<double>(), 12.0, 1e-12);
  EXPECT_EQ(lb["leaderboard_math_hard"]["metric"], "exact_match,none");
}

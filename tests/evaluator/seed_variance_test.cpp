// The spread across few-shot seeds; expected values from CPython's statistics module:
//   statistics.mean([0.25, 0.31, 0.2, 0.35, 0.28]) == 0.278
//   statistics.stdev([0.25, 0.31, 0.2, 0.35, 0.28]) == 0.05718391382198318
//   statistics.stdev([0.1, 0.7]) == 0.42426406871192845, statistics.stdev([0.4] * 3) == 0.0
#include <gtest/gtest.h>

#include "evaluator/seed_variance.hpp"

using lmeval::Json;

namespace {

Json section(double acc, double acc_norm, const char* se = nullptr) {
  Json task = {{"alias", "t"},
               {"acc,none", acc},
               {"acc_stderr,none", se ? Json(se) : Json(0.01)},
               {"acc_norm,none", acc_norm}};
  return Json{{"t", task}};
}

}  // namespace

TEST(Evaluator_SeedVariance, MeanSampleStdMinMaxInSeedOrder) {
  std::vector<double> acc = {0.25, 0.31, 0.2, 0.35, 0.28};
  std::vector<Json> by_seed;
  for (size_t i = 0; i < acc.size(); ++i) by_seed.push_back(section(acc[i], 0.4));
  Json v = lmeval::fewshot_seed_variance({1234, 1, 2, 3, 4}, by_seed);
  ASSERT_TRUE(v.contains("t"));
  EXPECT_EQ(v["t"]["seeds"], Json::parse("[1234,1,2,3,4]"));
  const Json& a = v["t"]["acc,none"];
  EXPECT_NEAR(a["mean"].get<double>(), 0.278, 1e-15);
  EXPECT_NEAR(a["std"].get<double>(), 0.05718391382198318, 1e-15);
  EXPECT_EQ(a["min"].get<double>(), 0.2);
  EXPECT_EQ(a["max"].get<double>(), 0.35);
  EXPECT_EQ(a["values"], Json::parse("[0.25,0.31,0.2,0.35,0.28]"));
  // Equal values: exactly their value and 0, as statistics gives.
  EXPECT_EQ(v["t"]["acc_norm,none"]["mean"].get<double>(), 0.4);
  EXPECT_EQ(v["t"]["acc_norm,none"]["std"].get<double>(), 0.0);
  // Stderr is not a score.
  EXPECT_FALSE(v["t"].contains("acc_stderr,none"));
  EXPECT_FALSE(v["t"].contains("alias"));
}

TEST(Evaluator_SeedVariance, TwoSeedsAndOneSeed) {
  Json two = lmeval::fewshot_seed_variance({7, 8}, {section(0.1, 0.1), section(0.7, 0.1)});
  EXPECT_NEAR(two["t"]["acc,none"]["std"].get<double>(), 0.42426406871192845, 1e-15);
  EXPECT_NEAR(two["t"]["acc,none"]["mean"].get<double>(), 0.4, 1e-15);
  // One seed: ddof=1 is undefined, so null (statistics.stdev raises).
  Json one = lmeval::fewshot_seed_variance({7}, {section(0.1, 0.1)});
  EXPECT_TRUE(one["t"]["acc,none"]["std"].is_null());
  EXPECT_EQ(one["t"]["acc,none"]["mean"].get<double>(), 0.1);
}

TEST(Evaluator_SeedVariance, ScoresMissingOrNotNumericInSomeSeedAreLeftOut) {
  Json a = section(0.1, 0.2), b = section(0.3, 0.4);
  b["t"]["acc_norm,none"] = "N/A";
  Json v = lmeval::fewshot_seed_variance({1, 2}, {a, b});
  EXPECT_TRUE(v["t"].contains("acc,none"));
  EXPECT_FALSE(v["t"].contains("acc_norm,none"));
}

// Normal and t distribution functions against scipy's values (tests/stats/goldens/intervals.json,
// written by scripts/gen_stats_goldens.py), to 1e-12 relative.
#include "lmeval/stats/distributions.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include "support/test_support.hpp"

namespace lmeval::stats {
namespace {

const nlohmann::json& goldens() {
  static const nlohmann::json g = [] {
    std::ifstream in(lmeval::testing::source_dir() / "tests/stats/goldens/intervals.json");
    return nlohmann::json::parse(in);
  }();
  return g;
}

// A golden number; the generator writes infinities as "inf" / "-inf".
double num(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>() == "inf" ? std::numeric_limits<double>::infinity()
                                                           : -std::numeric_limits<double>::infinity();
  return j.get<double>();
}

// Relative difference, with exact agreement required for zeros and infinities.
::testing::AssertionResult close(double got, double want, double rel = 1e-12) {
  if (std::isinf(want) || want == 0) {
    if (got == want) return ::testing::AssertionSuccess();
  } else if (std::fabs(got - want) <= rel * std::fabs(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << " want " << want << " (relative error "
                                       << std::fabs(got - want) / std::fabs(want) << ")";
}

TEST(Distributions, NormalCdfMatchesScipy) {
  for (const auto& row : goldens()["normal_cdf"])
    EXPECT_TRUE(close(normal_cdf(row[0]), num(row[1]))) << "x=" << row[0];
}

TEST(Distributions, NormalQuantileMatchesScipy) {
  for (const auto& row : goldens()["normal_quantile"])
    EXPECT_TRUE(close(normal_quantile(row[0]), num(row[1]))) << "p=" << row[0];
}

TEST(Distributions, StudentTCdfMatchesScipy) {
  ASSERT_GT(goldens()["t_cdf"].size(), 500u);
  for (const auto& row : goldens()["t_cdf"])
    EXPECT_TRUE(close(student_t_cdf(row[0], row[1]), num(row[2]))) << "x=" << row[0] << " df=" << row[1];
}

TEST(Distributions, StudentTQuantileMatchesScipy) {
  ASSERT_GT(goldens()["t_quantile"].size(), 500u);
  for (const auto& row : goldens()["t_quantile"])
    EXPECT_TRUE(close(student_t_quantile(row[0], row[1]), num(row[2]))) << "p=" << row[0] << " df=" << row[1];
}

TEST(Distributions, IncompleteBetaMatchesScipy) {
  for (const auto& row : goldens()["incomplete_beta"])
    EXPECT_TRUE(close(incomplete_beta(row[0], row[1], row[2]), num(row[3])))
        << "x=" << row[0] << " a=" << row[1] << " b=" << row[2];
}

TEST(Distributions, QuantileInvertsCdf) {
  for (double df : {1.0, 3.0, 12.5, 200.0}) {
    for (double p : {1e-8, 0.01, 0.3, 0.5, 0.77, 0.999}) {
      EXPECT_TRUE(close(student_t_cdf(student_t_quantile(p, df), df), p, 1e-13)) << p << " " << df;
    }
  }
  for (double p : {1e-15, 0.02, 0.5, 0.9})
    EXPECT_TRUE(close(normal_cdf(normal_quantile(p)), p, 1e-14)) << p;
}

TEST(Distributions, EdgesAndDomain) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(normal_quantile(0), -inf);
  EXPECT_EQ(normal_quantile(1), inf);
  EXPECT_EQ(student_t_quantile(0, 4), -inf);
  EXPECT_EQ(student_t_quantile(1, 4), inf);
  EXPECT_EQ(student_t_quantile(0.5, 4), 0);
  EXPECT_EQ(student_t_cdf(inf, 3), 1);
  EXPECT_EQ(student_t_cdf(-inf, 3), 0);
  EXPECT_EQ(student_t_cdf(1.5, inf), normal_cdf(1.5));
  EXPECT_EQ(student_t_quantile(0.975, inf), normal_quantile(0.975));
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
  EXPECT_TRUE(std::isnan(normal_quantile(-0.1)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.5, 0)));
  EXPECT_TRUE(std::isnan(student_t_cdf(0.5, -1)));
  EXPECT_TRUE(std::isnan(student_t_cdf(std::nan(""), 3)));
}

}  // namespace
}  // namespace lmeval::stats

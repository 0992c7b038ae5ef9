// Normal and t distribution functions against mpmath's values (tests/stats/goldens/intervals.json,
// written by scripts/gen_stats_goldens.py), to 1e-12 relative.
#include "lmeval/stats/distributions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "stats/golden_support.hpp"

namespace lmeval::stats {
namespace {

using testing::close;
using testing::goldens;
using testing::num;

TEST(Distributions, NormalCdfMatchesMpmath) {
  for (const auto& row : goldens()["normal_cdf"])
    EXPECT_TRUE(close(normal_cdf(row[0]), num(row[1]))) << "x=" << row[0];
}

TEST(Distributions, NormalQuantileMatchesMpmath) {
  for (const auto& row : goldens()["normal_quantile"])
    EXPECT_TRUE(close(normal_quantile(row[0]), num(row[1]))) << "p=" << row[0];
}

TEST(Distributions, StudentTCdfMatchesMpmath) {
  ASSERT_GT(goldens()["t_cdf"].size(), 500u);
  for (const auto& row : goldens()["t_cdf"])
    EXPECT_TRUE(close(student_t_cdf(row[0], row[1]), num(row[2])))
        << "x=" << row[0] << " df=" << row[1];
}

TEST(Distributions, StudentTQuantileMatchesMpmath) {
  ASSERT_GT(goldens()["t_quantile"].size(), 500u);
  for (const auto& row : goldens()["t_quantile"])
    EXPECT_TRUE(close(student_t_quantile(row[0], row[1]), num(row[2])))
        << "p=" << row[0] << " df=" << row[1];
}

TEST(Distributions, IncompleteBetaMatchesMpmath) {
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

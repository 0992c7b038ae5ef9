// The total standard error over items and few-shot seeds, checked against a simulation (no library
// has it): over many simulated runs its square averages to the actual variance of the seed mean.
#include "lmeval/stats/seed_variance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace {

// Scores x[k][i] = 0/1 draws from item difficulty a_i and seed shift b_k (a logistic model, so
// the data are what a few-shot accuracy looks like, not the ANOVA's own normal model).
std::vector<std::vector<double>> simulate(std::mt19937_64& gen, std::size_t n, std::size_t k,
                                          double sd_item, double sd_seed) {
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> a(n), b(k);
  for (auto& v : a) v = sd_item * g(gen);
  for (auto& v : b) v = sd_seed * g(gen);
  std::vector<std::vector<double>> x(k, std::vector<double>(n));
  for (std::size_t s = 0; s < k; ++s)
    for (std::size_t i = 0; i < n; ++i) x[s][i] = u(gen) < 1 / (1 + std::exp(-(0.3 + a[i] + b[s])));
  return x;
}

}  // namespace

TEST(SeedVariance, TotalMatchesTheSimulatedVarianceOfTheSeedMean) {
  std::mt19937_64 gen(2024);
  for (const auto& [n, k, sd_seed] :
       {std::tuple<std::size_t, std::size_t, double>{200, 5, 0.3}, {60, 3, 0.5}, {400, 8, 0.15}}) {
    const int reps = 4000;
    double sum = 0, sum2 = 0, mean_var_total = 0, mean_var_items = 0;
    for (int r = 0; r < reps; ++r) {
      const auto x = simulate(gen, n, k, 1.2, sd_seed);
      double m = 0;
      for (const auto& row : x)
        for (double v : row) m += v;
      m /= static_cast<double>(n * k);
      sum += m;
      sum2 += m * m;
      const auto se = lmeval::stats::seed_item_stderr(x);
      mean_var_total += se.total * se.total / reps;
      mean_var_items += se.items * se.items / reps;
    }
    const double actual = (sum2 - sum * sum / reps) / (reps - 1);
    SCOPED_TRACE(testing::Message()
                 << "n " << n << " K " << k << " actual var " << actual << " total "
                 << mean_var_total << " items only " << mean_var_items);
    std::printf("n %zu K %zu: mean se_total^2 / actual variance %.4f, se_items^2 / actual %.4f\n",
                n, k, mean_var_total / actual, mean_var_items / actual);
    // The variance of a sample variance over 4000 runs: about 2.2% relative; allow 8%.
    EXPECT_NEAR(mean_var_total / actual, 1.0, 0.08);
    // Holding seeds fixed misses the seed part: clearly too small here.
    EXPECT_LT(mean_var_items / actual, 0.85);
  }
}

TEST(SeedVariance, PartsAndFloor) {
  // Seeds identical: no seed variance; the total is the items' stderr.
  const std::vector<std::vector<double>> same = {
      {1, 0, 1, 1, 0, 0}, {1, 0, 1, 1, 0, 0}, {1, 0, 1, 1, 0, 0}};
  const auto s = lmeval::stats::seed_item_stderr(same);
  EXPECT_DOUBLE_EQ(s.total, s.items);
  EXPECT_EQ(s.seeds, 0);
  // items = sd of the item means / sqrt(n), the usual stderr.
  EXPECT_NEAR(s.items, std::sqrt(0.3 / 6), 1e-12);
  EXPECT_TRUE(std::isnan(lmeval::stats::seed_item_stderr({{1, 0, 1}}).total));  // one seed
}

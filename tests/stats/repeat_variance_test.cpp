// Between/within-question variance of sampled answers: against numpy and statsmodels' REML
// random-effects fit (tests/stats/goldens/repeats.json, scripts/gen_repeat_goldens.py), and
// against a simulation whose variance components are known in closed form.
#include "lmeval/stats/repeat_variance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "stats/golden_support.hpp"

namespace {

using lmeval::stats::repeat_variance;
using lmeval::stats::testing::close;

const nlohmann::json& repeat_goldens() {
  static const nlohmann::json g = [] {
    std::ifstream in(lmeval::testing::source_dir() / "tests/stats/goldens/repeats.json");
    return nlohmann::json::parse(in);
  }();
  return g;
}

}  // namespace

TEST(RepeatVariance, MatchesNumpyAndTheRemlFitOfStatsmodels) {
  const auto& cases = repeat_goldens()["cases"];
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto r = repeat_variance(c["x"].get<std::vector<std::vector<double>>>());
    ASSERT_TRUE(r.defined()) << r.undefined;
    EXPECT_EQ(r.n, c["n"].get<std::size_t>());
    EXPECT_EQ(r.k, c["k"].get<std::size_t>());
    EXPECT_TRUE(close(r.mean, c["mean"], 1e-12));
    EXPECT_TRUE(close(r.var_of_means, c["var_of_means"], 1e-12));
    EXPECT_TRUE(close(r.within, c["within"], 1e-12));
    EXPECT_TRUE(close(r.between, c["between"], 1e-10));
    EXPECT_TRUE(close(r.se, c["se"], 1e-12));
    // At the observed K with a non-negative between part, the projection reproduces the SE.
    if (r.between >= 0) EXPECT_TRUE(close(r.se_with(static_cast<double>(r.k)), r.se, 1e-12));
    if (c.contains("mixedlm")) {
      // REML by a numerical optimiser: equal in theory, to its tolerance in practice.
      EXPECT_TRUE(close(r.between, c["mixedlm"]["between"], 1e-3));
      EXPECT_TRUE(close(r.within, c["mixedlm"]["within"], 1e-4));
      EXPECT_TRUE(close(r.se, c["mixedlm"]["se"], 1e-4));
    }
  }
}

TEST(RepeatVariance, NegativeBetweenIsKeptButProjectionsUseZero) {
  const nlohmann::json* noise = nullptr;
  for (const auto& c : repeat_goldens()["cases"])
    if (c["between"].get<double>() < 0) noise = &c;
  ASSERT_NE(noise, nullptr);
  const auto r = repeat_variance((*noise)["x"].get<std::vector<std::vector<double>>>());
  EXPECT_LT(r.between, 0);
  EXPECT_TRUE(close(r.se_with(6), std::sqrt(r.within / 6 / static_cast<double>(r.n))));
  EXPECT_EQ(r.se_with(std::numeric_limits<double>::infinity()), 0);
  EXPECT_TRUE(close(r.within_share(), 1.0));
}

TEST(RepeatVariance, UndefinedCasesSayWhy) {
  EXPECT_NE(repeat_variance({{1, 0, 1}}).undefined.find("fewer than 2 questions"),
            std::string::npos);
  EXPECT_NE(repeat_variance({{1}, {0}, {1}}).undefined.find("repeats < 2"), std::string::npos);
  EXPECT_NE(repeat_variance({{1, 0}, {0, 1, 1}}).undefined.find("different numbers"),
            std::string::npos);
  const auto r = repeat_variance({{1, std::nan("")}, {0, 1}});
  EXPECT_FALSE(r.defined());
  EXPECT_TRUE(std::isnan(r.se));
  EXPECT_TRUE(std::isnan(r.se_with(4)));
  // Identical answers (greedy decoding): no within-question variance, nothing to gain from more K.
  const auto same = repeat_variance({{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}});
  EXPECT_EQ(same.within, 0);
  EXPECT_EQ(same.within_share(), 0);
  EXPECT_TRUE(close(same.se_with(6), same.se));
  EXPECT_TRUE(close(same.question_factor(6), 1.0));
}

// 0/1 answers with per-question success probability p_i ~ Beta(a, b): Var(x) = Var(p) and
// E[σ_i²] = E[p(1 − p)] = μ(1 − μ) − Var(p) are known exactly. Over many simulated evals the
// estimates average to them, se² averages to the actual variance of the eval mean at K, and the
// SE projected from K answers to 2K matches the actual variance of evals run with 2K answers.
TEST(RepeatVariance, MatchesASimulationWithKnownVarianceComponents) {
  std::mt19937_64 gen(18);
  for (const auto& [n, k, a, b] :
       {std::tuple<std::size_t, std::size_t, double, double>{100, 4, 0.6, 0.9},
        {40, 2, 2.0, 2.0},
        {200, 8, 0.3, 0.3}}) {
    const double mu = a / (a + b), var_p = a * b / ((a + b) * (a + b) * (a + b + 1));
    const double e_sigma2 = mu * (1 - mu) - var_p;
    std::gamma_distribution<double> ga(a, 1.0), gb(b, 1.0);
    std::uniform_real_distribution<double> u(0, 1);
    // n is copied in: clang 14 (clang-tidy's parser) cannot capture a structured binding, which
    // C++20 allows and gcc does.
    auto eval_mean_and_fit = [&, n = n](std::size_t kk, double& mean) {
      std::vector<std::vector<double>> x(n, std::vector<double>(kk));
      for (auto& q : x) {
        const double ya = ga(gen), p = ya / (ya + gb(gen));
        for (double& v : q) v = u(gen) < p ? 1.0 : 0.0;
      }
      auto r = repeat_variance(x);
      mean = r.mean;
      return r;
    };
    const int reps = 4000;
    double sum = 0, sum2 = 0, sum_2k = 0, sum2_2k = 0, between = 0, within = 0, se2 = 0, se2_2k = 0;
    for (int rep = 0; rep < reps; ++rep) {
      double m = 0;
      const auto r = eval_mean_and_fit(k, m);
      sum += m;
      sum2 += m * m;
      between += r.between / reps;
      within += r.within / reps;
      se2 += r.se * r.se / reps;
      se2_2k +=
          r.se_with(2.0 * static_cast<double>(k)) * r.se_with(2.0 * static_cast<double>(k)) / reps;
      double m2 = 0;
      eval_mean_and_fit(2 * k, m2);
      sum_2k += m2;
      sum2_2k += m2 * m2;
    }
    const double actual = (sum2 - sum * sum / reps) / (reps - 1);
    const double actual_2k = (sum2_2k - sum_2k * sum_2k / reps) / (reps - 1);
    const double nn = static_cast<double>(n), kk = static_cast<double>(k);
    std::printf(
        "n %zu K %zu: between %.5f (true %.5f), within %.5f (true %.5f); se^2/actual %.4f; "
        "projected 2K se^2/actual at 2K %.4f; Miller's formula at K / actual %.4f\n",
        n, k, between, var_p, within, e_sigma2, se2 / actual, se2_2k / actual_2k,
        (var_p + e_sigma2 / kk) / nn / actual);
    SCOPED_TRACE(testing::Message() << "n " << n << " K " << k);
    // Unbiased estimators: within 5% of the true components (simulation error about 1-2%).
    EXPECT_NEAR(between / var_p, 1.0, 0.05);
    EXPECT_NEAR(within / e_sigma2, 1.0, 0.05);
    // The formula itself, and its estimate, against the simulated variance (4,000 runs: ~2.2%
    // error).
    EXPECT_NEAR((var_p + e_sigma2 / kk) / nn / actual, 1.0, 0.08);
    EXPECT_NEAR(se2 / actual, 1.0, 0.08);
    EXPECT_NEAR(se2_2k / actual_2k, 1.0, 0.08);
  }
}

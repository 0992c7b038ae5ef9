// Minimum detectable difference: how large a true difference between two scores must be before
// a comparison of that size would find it most of the time.
#pragma once

#include <cstddef>

namespace lmeval::stats {

// The smallest true difference d that a two-sided z test at level alpha rejects with probability
// `power`, when the estimated difference has standard error se_diff: the d solving
//   Phi(d/se - z) + Phi(-d/se - z) = power,  z = Phi^-1(1 - alpha/2)
// (both rejection tails counted, as statsmodels' NormalIndPower does).
double minimum_detectable_difference(double se_diff, double alpha = 0.05, double power = 0.8);

// The standard error of the difference between two runs' means over the same n items, each with
// per-item standard deviation sd and per-item correlation rho between the runs:
//   sd * sqrt(2 (1 - rho) / n)
// (rho = 0: two independent samples of the same size).
double difference_stderr(double sd, size_t n, double rho = 0);

// The probability that a two-sided z test at level alpha rejects when the true difference is d and
// its estimate has standard error se: Phi(d/se - z) + Phi(-d/se - z) (statsmodels'
// NormalIndPower().power(d/sd, n, alpha, ratio=0) with se = sd/sqrt(n)). NaN when se is not > 0.
double power_of_test(double d, double se, double alpha = 0.05);

// Items needed (a real number; round up) for that test to reach `power` against a true difference d
// when one item's score difference has standard deviation sd: (k·sd/d)^2 with
// k = minimum_detectable_difference(1, alpha, power), statsmodels'
// NormalIndPower().solve_power(d/sd, alpha=alpha, power=power, ratio=0). NaN unless sd > 0, d != 0.
double items_needed(double d, double sd, double alpha = 0.05, double power = 0.8);

// The standard error a power calculation should assume where a task has clusters: the larger of
// the plain and the clustered one (a clustered SE below the plain one is as likely noise as
// negative within-cluster correlation; NaN clustered falls back to plain).
double conservative_stderr(double plain, double clustered);

}  // namespace lmeval::stats

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

}  // namespace lmeval::stats

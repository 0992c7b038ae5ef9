// Normal and Student-t distribution functions for intervals, tests and power calculations.
// Accuracy target: 1e-12 relative to scipy.stats (checked by tests/stats/distributions_test.cpp
// against tests/stats/goldens/intervals.json from scripts/gen_stats_goldens.py).
// Arguments outside the domain (p outside [0, 1], df <= 0, NaN) give NaN, as scipy does.
#pragma once

namespace lmeval::stats {

// P(Z <= x) for a standard normal Z.
double normal_cdf(double x);
// The x with normal_cdf(x) == p; -inf at 0, +inf at 1.
double normal_quantile(double p);

// P(T <= x) for Student's t with df degrees of freedom (df may be fractional; +inf gives the
// normal).
double student_t_cdf(double x, double df);
// The x with student_t_cdf(x, df) == p; -inf at 0, +inf at 1.
double student_t_quantile(double p, double df);

// Regularized incomplete beta I_x(a, b) (a, b > 0, 0 <= x <= 1): the Beta(a, b) CDF.
double incomplete_beta(double x, double a, double b);
// The x with incomplete_beta(x, a, b) == p: the Beta(a, b) quantile.
double beta_quantile(double p, double a, double b);

}  // namespace lmeval::stats

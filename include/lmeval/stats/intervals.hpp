// 95% (or other) confidence intervals for a task's score: Wilson for 0/1 scores, Student t for
// other means, percentiles of bootstrap resamples for aggregates without a closed form.
#pragma once

#include <vector>

namespace lmeval::stats {

struct Interval {
  double low = 0;
  double high = 0;
};

// Wilson score interval for `successes` out of `n` trials (n > 0): the same numbers as
// statsmodels' proportion_confint(successes, n, alpha=1-confidence, method="wilson").
Interval wilson_interval(double successes, double n, double confidence = 0.95);

// Clopper-Pearson ("exact") interval, from the beta distribution's quantiles: the same numbers
// as statsmodels' proportion_confint(..., method="beta"). Used below 100 items, where Wilson's
// normal approximation is at its weakest.
Interval clopper_pearson_interval(double successes, double n, double confidence = 0.95);

// mean -/+ t_{(1+confidence)/2, df} * stderr; df = +inf gives the normal interval.
Interval t_interval(double mean, double stderr, double df, double confidence = 0.95);

// Percentile interval of bootstrap statistics: the (1-confidence)/2 and (1+confidence)/2
// percentiles with numpy.percentile's default (linear) rule. Empty input gives {NaN, NaN}.
Interval percentile_interval(std::vector<double> statistics, double confidence = 0.95);

// The q-quantile (0 <= q <= 1) of xs by numpy.percentile's linear rule; xs need not be sorted.
double linear_quantile(std::vector<double> xs, double q);

}  // namespace lmeval::stats

// Between- and within-question variance of a score averaged over K sampled answers per question.
#include "lmeval/stats/repeat_variance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lmeval::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double RepeatVariance::se_with(double k_prime) const {
  if (!defined() || !(k_prime > 0)) return kNaN;
  const double noise = std::isinf(k_prime) ? 0.0 : within / k_prime;
  return std::sqrt((std::max(between, 0.0) + noise) / static_cast<double>(n));
}

double RepeatVariance::within_share() const {
  if (!defined()) return kNaN;
  const double noise = within / static_cast<double>(k), total = std::max(between, 0.0) + noise;
  return total > 0 ? noise / total : kNaN;
}

double RepeatVariance::question_factor(double k_prime) const {
  const double projected = se_with(k_prime);
  if (!defined() || !(projected > 0)) return kNaN;
  return se * se / (projected * projected);
}

RepeatVariance repeat_variance(const std::vector<std::vector<double>>& x) {
  RepeatVariance r;
  r.n = x.size();
  r.k = x.empty() ? 0 : x[0].size();
  auto undefined = [&r](std::string why) {
    r.mean = r.var_of_means = r.within = r.between = r.se = kNaN;
    r.undefined = std::move(why);
    return r;
  };
  if (r.n < 2) return undefined("fewer than 2 questions with sampled answers");
  if (r.k < 2) return undefined("fewer than 2 sampled answers per question (repeats < 2)");
  for (const auto& q : x) {
    if (q.size() != r.k) return undefined("questions have different numbers of sampled answers");
    for (double v : q)
      if (!std::isfinite(v)) return undefined("a sampled answer's score is not a finite number");
  }
  const double n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  std::vector<double> means(r.n);
  double within_sum = 0;
  for (std::size_t i = 0; i < r.n; ++i) {
    double m = 0;
    for (double v : x[i]) m += v;
    m /= k;
    double ss = 0;
    for (double v : x[i]) ss += (v - m) * (v - m);
    means[i] = m;
    within_sum += ss / (k - 1);
  }
  double grand = 0;
  for (double m : means) grand += m;
  grand /= n;
  double ss_means = 0;
  for (double m : means) ss_means += (m - grand) * (m - grand);
  r.mean = grand;
  r.var_of_means = ss_means / (n - 1);
  r.within = within_sum / n;
  r.between = r.var_of_means - r.within / k;
  r.se = std::sqrt(r.var_of_means / n);
  return r;
}

}  // namespace lmeval::stats

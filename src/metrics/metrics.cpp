// Metric arithmetic: exact_match, means, aggregation by name, closed-form and bootstrap standard
// errors.
#include "lmeval/metrics/metrics.hpp"

#include <algorithm>
#include <cmath>

#include "builtins.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/registry.hpp"

namespace lmeval {

double exact_match(std::string pred, std::string ref, const ExactMatchOptions& o) {
  for (const auto& rx : o.regexes_to_ignore) {
    auto re = PyRegex::compile(rx);
    pred = re->sub("", pred);
    ref = re->sub("", ref);
  }
  if (o.ignore_case) {
    pred = unicode::py_lower(pred);
    ref = unicode::py_lower(ref);
  }
  auto drop = [](std::string& s, const std::string& chars) {
    s.erase(std::remove_if(s.begin(), s.end(),
                           [&](char c) { return chars.find(c) != std::string::npos; }),
            s.end());
  };
  if (o.ignore_punctuation) {
    static const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    drop(pred, punct);
    drop(ref, punct);
  }
  if (o.ignore_numbers) {
    drop(pred, "0123456789");
    drop(ref, "0123456789");
  }
  return pred == ref ? 1.0 : 0.0;
}

double py_mean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

double sample_stddev(const std::vector<double>& xs) {
  double mu = py_mean(xs);
  double s = 0;
  for (double x : xs) s += (x - mu) * (x - mu);
  return std::sqrt(s / static_cast<double>(xs.size() - 1));
}

double mean_stderr(const std::vector<double>& xs) {
  return sample_stddev(xs) / std::sqrt(static_cast<double>(xs.size()));
}

size_t np_argmax(const std::vector<double>& xs) {
  size_t best = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) return i;
    if (xs[i] > xs[best]) best = i;
  }
  return best;
}

namespace {

std::vector<double> numbers_of(const std::vector<Json>& items) {
  std::vector<double> out;
  out.reserve(items.size());
  for (const auto& v : items) out.push_back(metrics::number_of(v));
  return out;
}

const metrics::Aggregation& registered_aggregation(const std::string& name) {
  const metrics::Aggregation* a = metrics::find_aggregation(name);
  if (!a)
    throw UserError("unknown aggregation '" + name + "'", {}, "one of the registered aggregations");
  return *a;
}

}  // namespace

double aggregate(const std::string& name, const std::vector<Json>& items) {
  const metrics::Aggregation& a = registered_aggregation(name);
  return a.over_numbers ? a.over_numbers(numbers_of(items)) : a.over_items(items);
}

double bootstrap_stderr(const std::string& agg, const std::vector<Json>& items, int64_t iters) {
  return sample_stddev(bootstrap_statistics(agg, items, iters));
}

bool has_bootstrap_stderr(const std::string& agg) {
  const metrics::Aggregation* a = metrics::find_aggregation(agg);
  return a && a->stderr_method == metrics::StderrMethod::Bootstrap;
}

std::vector<double> bootstrap_statistics(const std::string& agg, const std::vector<Json>& items,
                                         int64_t iters) {
  int64_t chunk = std::min<int64_t>(1000, iters);
  std::vector<double> res;
  res.reserve(static_cast<size_t>(iters));
  const metrics::Aggregation& a = registered_aggregation(agg);
  bool numeric = static_cast<bool>(a.over_numbers);
  std::vector<double> xs;
  if (numeric) xs = numbers_of(items);
  std::vector<double> sample_d(items.size());
  std::vector<Json> sample_j;
  for (int64_t i = 0; i < iters / chunk; ++i) {
    PyRandom rng(i);
    for (int64_t c = 0; c < chunk; ++c) {
      auto idx = rng.choices_indices(items.size(), items.size());
      if (numeric) {
        for (size_t k = 0; k < idx.size(); ++k) sample_d[k] = xs[idx[k]];
        res.push_back(a.over_numbers(sample_d));
      } else {
        sample_j.clear();
        for (size_t k : idx) sample_j.push_back(items[k]);
        res.push_back(a.over_items(sample_j));
      }
    }
  }
  return res;
}

std::optional<double> stderr_for(const std::string& agg, const std::vector<Json>& items,
                                 int64_t iters) {
  if (iters <= 0 || items.size() <= 1) return std::nullopt;
  const metrics::Aggregation* a = metrics::find_aggregation(agg);
  if (!a) return std::nullopt;
  switch (a->stderr_method) {
    case metrics::StderrMethod::MeanClosedForm:
      return mean_stderr(numbers_of(items));
    case metrics::StderrMethod::Bootstrap:
      return bootstrap_stderr(agg, items, iters);
    case metrics::StderrMethod::None:
      break;
  }
  return std::nullopt;
}

double pooled_sample_stderr(const std::vector<double>& stderrs, const std::vector<double>& sizes) {
  double num_ = 0, total = 0;
  for (size_t i = 0; i < stderrs.size(); ++i) {
    // Python: (size - 1) * stderr**2 * size, i.e. the square first.
    num_ += (sizes[i] - 1) * (stderrs[i] * stderrs[i]) * sizes[i];
    total += sizes[i];
  }
  double k = static_cast<double>(stderrs.size());
  return std::sqrt(num_ / (total - k) / total);
}

double unweighted_mean_stderr(const std::vector<double>& stderrs) {
  double sum = 0;
  for (double se : stderrs) sum += se * se;
  return std::sqrt(sum) / static_cast<double>(stderrs.size());
}

double combined_sample_stderr(const std::vector<double>& stderrs, const std::vector<double>& sizes,
                              const std::vector<double>& metrics) {
  double variance = stderrs[0] * stderrs[0];
  double curr_size = sizes[0], curr_score = metrics[0];
  // As the reference's loop: curr_size is never advanced past the first subtask.
  for (size_t i = 1; i < stderrs.size(); ++i) {
    double size = sizes[i], score = metrics[i], se = stderrs[i];
    curr_score = ((curr_score * curr_size) + (score * size)) / (curr_size + size);
    double d = curr_score - score;
    variance = ((curr_size - 1) * variance + (size - 1) * (se * se)) / (curr_size + size - 1) +
               curr_size * size / ((curr_size + size) * (curr_size + size - 1)) * (d * d);
  }
  return std::sqrt(variance);
}

}  // namespace lmeval

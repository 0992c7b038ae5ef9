// The built-in aggregations (the reference's api/metrics.py aggregation functions) and their
// stderr methods (stderr_for_metric: closed form for mean; bootstrap for its bootstrappable list).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "builtins.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/metrics/metrics.hpp"
#include "lmeval/metrics/sacrebleu.hpp"

namespace lmeval::metrics {

double number_of(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_null()) return NAN;
  throw UserError("metric value is not a number: " + v.dump(), {}, "a number");
}

namespace {

// Binary confusion counts with positive label 1 (sklearn defaults).
void confusion_counts(const std::vector<Json>& items, double& tp, double& tn, double& fp,
                      double& fn) {
  tp = tn = fp = fn = 0;
  for (const auto& it : items) {
    double g = number_of(it[0]), p = number_of(it[1]);
    if (g == 1 && p == 1)
      tp++;
    else if (g != 1 && p != 1)
      tn++;
    else if (g != 1 && p == 1)
      fp++;
    else
      fn++;
  }
}

double median_of(const std::vector<double>& xs) {
  std::vector<double> s = xs;
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

double nanmean_of(const std::vector<double>& xs) {
  double sum = 0;
  size_t n = 0;
  for (double x : xs)
    if (!std::isnan(x)) sum += x, ++n;
  return n ? sum / static_cast<double>(n) : NAN;
}

// weighted_perplexity and bits_per_byte: items are (log-likelihood, weight) pairs.
std::pair<double, double> summed_pairs(const std::vector<Json>& items) {
  double ll = 0, n = 0;
  for (const auto& it : items) {
    ll += number_of(it[0]);
    n += number_of(it[1]);
  }
  return {ll, n};
}

double f1_of(const std::vector<Json>& items) {
  double tp, tn, fp, fn;
  confusion_counts(items, tp, tn, fp, fn);
  double denom = 2 * tp + fp + fn;
  return denom == 0 ? 0.0 : 2 * tp / denom;
}

double matthews_corrcoef_of(const std::vector<Json>& items) {
  // sklearn's multiclass formula reduces to the binary one for two labels; use the general
  // covariance form over the labels present.
  std::map<int64_t, double> t_sum, p_sum;
  double correct = 0, n = 0;
  for (const auto& it : items) {
    int64_t g = static_cast<int64_t>(number_of(it[0])), p = static_cast<int64_t>(number_of(it[1]));
    t_sum[g]++;
    p_sum[p]++;
    if (g == p) correct++;
    n++;
  }
  double tp_sum = 0, pp = 0, tt = 0;
  std::set<int64_t> labels;
  for (auto& [k, v] : t_sum) labels.insert(k);
  for (auto& [k, v] : p_sum) labels.insert(k);
  for (int64_t l : labels) {
    double t = t_sum.count(l) ? t_sum[l] : 0, p = p_sum.count(l) ? p_sum[l] : 0;
    tp_sum += t * p;
    pp += p * p;
    tt += t * t;
  }
  double cov_ytyp = correct * n - tp_sum;
  double cov_ypyp = n * n - pp;
  double cov_ytyt = n * n - tt;
  if (cov_ypyp * cov_ytyt == 0) return 0.0;
  return cov_ytyp / std::sqrt(cov_ytyt * cov_ypyp);
}

double brier_score_of(const std::vector<Json>& items) {
  double total = 0;
  for (const auto& it : items) {
    int64_t gold = static_cast<int64_t>(number_of(it[0]));
    const Json& probs = it[1];
    double s = 0;
    for (size_t j = 0; j < probs.size(); ++j) {
      double d = number_of(probs[j]) - (static_cast<int64_t>(j) == gold ? 1.0 : 0.0);
      s += d * d;
    }
    total += s;
  }
  return total / static_cast<double>(items.size());
}

// An aggregation over numbers, also usable over items (each converted by number_of).
Aggregation numeric(std::string name, std::function<double(const std::vector<double>&)> fn,
                    StderrMethod method) {
  Aggregation a;
  a.name = std::move(name);
  a.over_items = [fn](const std::vector<Json>& items) {
    std::vector<double> xs;
    xs.reserve(items.size());
    for (const auto& v : items) xs.push_back(number_of(v));
    return fn(xs);
  };
  a.over_numbers = std::move(fn);
  a.stderr_method = method;
  return a;
}

Aggregation over_items(std::string name, std::function<double(const std::vector<Json>&)> fn,
                       StderrMethod method) {
  return {std::move(name), std::move(fn), nullptr, method};
}

}  // namespace

std::vector<Aggregation> builtin_aggregations() {
  using S = StderrMethod;
  return {
      numeric("mean", py_mean, S::MeanClosedForm),
      numeric("median", median_of, S::Bootstrap),
      numeric("nanmean", nanmean_of, S::Bootstrap),
      numeric(
          "perplexity", [](const std::vector<double>& xs) { return std::exp(-py_mean(xs)); },
          S::Bootstrap),
      over_items(
          "weighted_perplexity",
          [](const std::vector<Json>& items) {
            auto [ll, n] = summed_pairs(items);
            return std::exp(-(ll / n));
          },
          S::None),
      over_items(
          "bits_per_byte",
          [](const std::vector<Json>& items) {
            auto [ll, n] = summed_pairs(items);
            return -(ll / n) / std::log(2.0);
          },
          S::None),
      over_items("f1", f1_of, S::Bootstrap),
      over_items("matthews_corrcoef", matthews_corrcoef_of, S::Bootstrap),
      over_items("brier_score", brier_score_of, S::None),
      // the corpus translation metrics, as sacrebleu computes them (sacrebleu_*.cpp)
      over_items(
          "bleu", [](const std::vector<Json>& items) { return sacrebleu_aggregate("bleu", items); },
          S::Bootstrap),
      over_items(
          "chrf", [](const std::vector<Json>& items) { return sacrebleu_aggregate("chrf", items); },
          S::Bootstrap),
      over_items(
          "chrf++",
          [](const std::vector<Json>& items) { return sacrebleu_aggregate("chrf++", items); },
          S::Bootstrap),
      over_items(
          "ter", [](const std::vector<Json>& items) { return sacrebleu_aggregate("ter", items); },
          S::Bootstrap),
      // predict_only: the reference's bypass aggregation returns 999 without reading the items.
      over_items(
          "bypass", [](const std::vector<Json>&) { return 999.0; }, S::None),
  };
}

}  // namespace lmeval::metrics

// Metrics: registry, exact_match, aggregations, closed-form and bootstrap standard errors.
#include "lmeval/metrics/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval {

const std::vector<MetricInfo>& metric_registry() {
  static const std::vector<MetricInfo> r = {
      {"acc", "mean", true, "multiple_choice, loglikelihood"},
      {"acc_norm", "mean", true, "multiple_choice"},
      {"acc_bytes", "mean", true, "multiple_choice"},
      {"acc_mutual_info", "mean", true, "multiple_choice"},
      {"exact_match", "mean", true, "generate_until, multiple_choice"},
      {"perplexity", "perplexity", false, "loglikelihood"},
      {"likelihood", "mean", true, "multiple_choice"},
      {"word_perplexity", "weighted_perplexity", false, "loglikelihood_rolling"},
      {"byte_perplexity", "weighted_perplexity", false, "loglikelihood_rolling"},
      {"bits_per_byte", "bits_per_byte", false, "loglikelihood_rolling"},
      {"brier_score", "brier_score", false, "multiple_choice"},
      // lm-eval's own (--continuous_metrics): the gold choice's softmax probability, and its
      // log-likelihood minus the best wrong choice's.
      {"p_correct", "mean", true, "multiple_choice"},
      {"logprob_gold_margin", "mean", true, "multiple_choice"},
      {"mcc", "matthews_corrcoef", true, "multiple_choice"},
      {"f1", "f1", true, "multiple_choice"},
      {"acc_all", "mean", true, "multiple_choice"},
      {"bypass", "bypass", true, "any (predict_only)"},
  };
  return r;
}

const MetricInfo* find_metric(const std::string& name) {
  for (const auto& m : metric_registry())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<std::string>& aggregation_names() {
  static const std::vector<std::string> a = {"mean", "median", "nanmean", "perplexity",
                                             "weighted_perplexity", "bits_per_byte", "f1",
                                             "matthews_corrcoef", "brier_score", "bypass"};
  return a;
}

bool is_aggregation(const std::string& name) {
  const auto& a = aggregation_names();
  return std::find(a.begin(), a.end(), name) != a.end();
}

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
    s.erase(std::remove_if(s.begin(), s.end(), [&](char c) { return chars.find(c) != std::string::npos; }),
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

double num(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_null()) return NAN;
  throw UserError("metric value is not a number: " + v.dump(), {}, "a number");
}

std::vector<double> nums(const std::vector<Json>& items) {
  std::vector<double> out;
  out.reserve(items.size());
  for (const auto& v : items) out.push_back(num(v));
  return out;
}

// Binary confusion counts with positive label 1 (sklearn defaults).
void confusion(const std::vector<Json>& items, double& tp, double& tn, double& fp, double& fn) {
  tp = tn = fp = fn = 0;
  for (const auto& it : items) {
    double g = num(it[0]), p = num(it[1]);
    if (g == 1 && p == 1) tp++;
    else if (g != 1 && p != 1) tn++;
    else if (g != 1 && p == 1) fp++;
    else fn++;
  }
}

double aggregate_numbers(const std::string& agg, const std::vector<double>& xs) {
  if (agg == "mean") return py_mean(xs);
  if (agg == "median") {
    std::vector<double> s = xs;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  }
  if (agg == "nanmean") {
    double sum = 0;
    size_t n = 0;
    for (double x : xs)
      if (!std::isnan(x)) sum += x, ++n;
    return n ? sum / static_cast<double>(n) : NAN;
  }
  if (agg == "perplexity") return std::exp(-py_mean(xs));
  if (agg == "bypass") return 999;
  throw UserError("aggregation '" + agg + "' needs paired items", {}, "");
}

}  // namespace

double aggregate(const std::string& agg, const std::vector<Json>& items) {
  if (agg == "bypass") return 999;
  if (agg == "weighted_perplexity" || agg == "bits_per_byte") {
    double ll = 0, n = 0;
    for (const auto& it : items) {
      ll += num(it[0]);
      n += num(it[1]);
    }
    return agg == "weighted_perplexity" ? std::exp(-(ll / n)) : -(ll / n) / std::log(2.0);
  }
  if (agg == "f1") {
    double tp, tn, fp, fn;
    confusion(items, tp, tn, fp, fn);
    double denom = 2 * tp + fp + fn;
    return denom == 0 ? 0.0 : 2 * tp / denom;
  }
  if (agg == "matthews_corrcoef") {
    // sklearn's multiclass formula reduces to the binary one for two labels; use the general
    // covariance form over the labels present.
    std::map<int64_t, double> t_sum, p_sum;
    double correct = 0, n = 0;
    for (const auto& it : items) {
      int64_t g = static_cast<int64_t>(num(it[0])), p = static_cast<int64_t>(num(it[1]));
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
  if (agg == "brier_score") {
    double total = 0;
    for (const auto& it : items) {
      int64_t gold = static_cast<int64_t>(num(it[0]));
      const Json& probs = it[1];
      double s = 0;
      for (size_t j = 0; j < probs.size(); ++j) {
        double d = num(probs[j]) - (static_cast<int64_t>(j) == gold ? 1.0 : 0.0);
        s += d * d;
      }
      total += s;
    }
    return total / static_cast<double>(items.size());
  }
  if (!is_aggregation(agg)) throw UserError("unknown aggregation '" + agg + "'", {}, "one of the registered aggregations");
  return aggregate_numbers(agg, nums(items));
}

double bootstrap_stderr(const std::string& agg, const std::vector<Json>& items, int64_t iters) {
  return sample_stddev(bootstrap_statistics(agg, items, iters));
}

bool has_bootstrap_stderr(const std::string& agg) {
  static const std::vector<std::string> boot = {"median", "matthews_corrcoef", "f1", "perplexity",
                                                "nanmean"};
  return std::find(boot.begin(), boot.end(), agg) != boot.end();
}

std::vector<double> bootstrap_statistics(const std::string& agg, const std::vector<Json>& items, int64_t iters) {
  int64_t chunk = std::min<int64_t>(1000, iters);
  std::vector<double> res;
  res.reserve(static_cast<size_t>(iters));
  bool numeric = agg == "median" || agg == "perplexity" || agg == "nanmean" || agg == "mean";
  std::vector<double> xs;
  if (numeric) xs = nums(items);
  std::vector<double> sample_d(items.size());
  std::vector<Json> sample_j;
  for (int64_t i = 0; i < iters / chunk; ++i) {
    PyRandom rng(i);
    for (int64_t c = 0; c < chunk; ++c) {
      auto idx = rng.choices_indices(items.size(), items.size());
      if (numeric) {
        for (size_t k = 0; k < idx.size(); ++k) sample_d[k] = xs[idx[k]];
        res.push_back(aggregate_numbers(agg, sample_d));
      } else {
        sample_j.clear();
        for (size_t k : idx) sample_j.push_back(items[k]);
        res.push_back(aggregate(agg, sample_j));
      }
    }
  }
  return res;
}

std::optional<double> stderr_for(const std::string& agg, const std::vector<Json>& items,
                                 int64_t iters) {
  if (iters <= 0 || items.size() <= 1) return std::nullopt;
  if (agg == "mean") return mean_stderr(nums(items));
  if (has_bootstrap_stderr(agg)) return bootstrap_stderr(agg, items, iters);
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

}  // namespace lmeval

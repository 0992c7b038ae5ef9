// Mean, sample standard deviation, min and max of every score across few-shot seeds.
#include "seed_variance.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace lmeval {

namespace {

// A score, not its uncertainty: stderr (and the confidence-interval keys beside it) vary with the
// seed too, but their spread says nothing about the prompt's effect on the score.
bool is_score_key(const std::string& key) {
  auto comma = key.find(',');
  if (comma == std::string::npos) return false;
  std::string metric = key.substr(0, comma);
  return metric.find("_stderr") == std::string::npos && metric.find("_ci") == std::string::npos;
}

// Sums are taken about the first value (the shifted-data algorithm), so equal values give their
// own value as mean and exactly 0 as std.
Json summary(const std::vector<double>& v) {
  double n = static_cast<double>(v.size());
  double shift = v[0], d = 0;
  for (double x : v) d += x - shift;
  double mean = shift + d / n;
  Json out = Json::object();
  out["mean"] = mean;
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - shift) * (x - shift);
    out["std"] = std::sqrt(std::max(0.0, (ss - d * d / n) / (n - 1)));
  } else {
    out["std"] = nullptr;
  }
  out["min"] = *std::min_element(v.begin(), v.end());
  out["max"] = *std::max_element(v.begin(), v.end());
  out["values"] = v;
  return out;
}

}  // namespace

Json fewshot_seed_variance(const std::vector<int64_t>& seeds,
                           const std::vector<Json>& results_by_seed) {
  Json out = Json::object();
  if (results_by_seed.empty()) return out;
  const Json& first = results_by_seed[0];
  for (auto task = first.begin(); task != first.end(); ++task) {
    Json entry = Json::object();
    entry["seeds"] = seeds;
    for (auto it = task.value().begin(); it != task.value().end(); ++it) {
      if (!is_score_key(it.key())) continue;
      std::vector<double> values;
      for (const Json& r : results_by_seed) {
        const Json* e = r.contains(task.key()) ? &r[task.key()] : nullptr;
        if (!e || !e->contains(it.key()) || !(*e)[it.key()].is_number()) break;
        values.push_back((*e)[it.key()].get<double>());
      }
      if (values.size() == results_by_seed.size()) entry[it.key()] = summary(values);
    }
    if (entry.size() > 1) out[task.key()] = entry;
  }
  return out;
}

}  // namespace lmeval

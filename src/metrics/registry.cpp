// The metric and aggregation registry: storage, lookup, registration.
#include "lmeval/metrics/registry.hpp"

#include <deque>

#include "builtins.hpp"

namespace lmeval::metrics {

namespace {

// Deques: registering never moves an entry, so pointers handed out stay valid.
struct Store {
  std::deque<Metric> metrics;
  std::deque<Aggregation> aggregations;
};

template <typename T>
void put(std::deque<T>& entries, T entry) {
  for (auto& e : entries)
    if (e.name == entry.name) {
      e = std::move(entry);
      return;
    }
  entries.push_back(std::move(entry));
}

Store& store() {
  static Store s = [] {
    Store b;
    for (auto& a : builtin_aggregations()) put(b.aggregations, std::move(a));
    for (auto& m : builtin_metrics()) put(b.metrics, std::move(m));
    return b;
  }();
  return s;
}

}  // namespace

const Metric* find(const std::string& name) {
  for (const auto& m : store().metrics)
    if (m.name == name) return &m;
  return nullptr;
}

const Aggregation* find_aggregation(const std::string& name) {
  for (const auto& a : store().aggregations)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<const Metric*> all() {
  std::vector<const Metric*> out;
  for (const auto& m : store().metrics) out.push_back(&m);
  return out;
}

std::vector<const Aggregation*> all_aggregations() {
  std::vector<const Aggregation*> out;
  for (const auto& a : store().aggregations) out.push_back(&a);
  return out;
}

std::vector<std::string> default_metric_names(const std::string& output_type) {
  if (output_type == "loglikelihood") return {"perplexity", "acc"};
  if (output_type == "loglikelihood_rolling")
    return {"word_perplexity", "byte_perplexity", "bits_per_byte"};
  if (output_type == "multiple_choice") return {"acc", "acc_norm"};
  return {"exact_match"};
}

void register_metric(Metric metric) { put(store().metrics, std::move(metric)); }

void register_aggregation(Aggregation aggregation) {
  put(store().aggregations, std::move(aggregation));
}

}  // namespace lmeval::metrics

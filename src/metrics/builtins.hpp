// The built-in metrics and aggregations, registered by registry.cpp on first use.
#pragma once

#include <vector>

#include "lmeval/metrics/registry.hpp"

namespace lmeval::metrics {

// In registration order (see registry.hpp: the order is the reference's result-dict key order).
std::vector<Aggregation> builtin_aggregations();
std::vector<Metric> builtin_metrics();

// A per-document value as a number: bools 1/0, null NaN; UserError otherwise.
double number_of(const Json& v);

}  // namespace lmeval::metrics

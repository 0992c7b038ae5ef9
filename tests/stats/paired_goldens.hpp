// The goldens of scripts/gen_paired_goldens.py (paired tests, item analysis, bootstrap ranks) and
// an absolute comparison within 1e-9 that lets NaN match null.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "support/test_support.hpp"

namespace lmeval::testing {

inline const nlohmann::json& paired_goldens() {
  static const nlohmann::json g =
      nlohmann::json::parse(read_file(source_dir() / "tests/stats/goldens/paired.json"));
  return g;
}

// scripts/gen_inference_goldens.py: compare's exact McNemar interval, power, multiple testing.
inline const nlohmann::json& inference_goldens() {
  static const nlohmann::json g =
      nlohmann::json::parse(read_file(source_dir() / "tests/stats/goldens/inference.json"));
  return g;
}

inline double golden_number(const nlohmann::json& v) {
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

// Equal within 1e-9, NaN matching NaN (scipy's "undefined").
inline ::testing::AssertionResult near_golden(double got, const nlohmann::json& want) {
  const double w = golden_number(want);
  if (std::isnan(w) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (std::fabs(got - w) <= 1e-9) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", scipy/statsmodels " << want.dump();
}

}  // namespace lmeval::testing

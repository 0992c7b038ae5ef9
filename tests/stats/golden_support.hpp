// The golden numbers of tests/stats (scripts/gen_stats_goldens.py) and a relative comparison.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "support/test_support.hpp"

namespace lmeval::stats::testing {

inline const nlohmann::json& goldens() {
  static const nlohmann::json g = [] {
    std::ifstream in(lmeval::testing::source_dir() / "tests/stats/goldens/intervals.json");
    return nlohmann::json::parse(in);
  }();
  return g;
}

// A golden number; the generator writes infinities as "inf" / "-inf".
inline double num(const nlohmann::json& j) {
  if (j.is_string())
    return j.get<std::string>() == "inf" ? std::numeric_limits<double>::infinity()
                                         : -std::numeric_limits<double>::infinity();
  return j.get<double>();
}

// Relative difference, with exact agreement required for zeros and infinities.
inline ::testing::AssertionResult close(double got, double want, double rel = 1e-12) {
  if (std::isinf(want) || want == 0) {
    if (got == want) return ::testing::AssertionSuccess();
  } else if (std::fabs(got - want) <= rel * std::fabs(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << " want " << want << " (relative error "
                                       << std::fabs(got - want) / std::fabs(want) << ")";
}

}  // namespace lmeval::stats::testing

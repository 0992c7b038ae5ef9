// How the analysis outputs show numbers: JSON null for non-finite values, fixed decimals in text,
// "undefined" (never 0) for a number that cannot be computed.
#pragma once

#include <fmt/format.h>
#include <cmath>
#include <string>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis::format {

inline Json number(double v) { return std::isfinite(v) ? Json(v) : Json(); }
inline std::string fixed(double v, int digits = 4) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "undefined";
}
inline std::string signed_fixed(double v, int digits = 4) {
  return std::isfinite(v) ? fmt::format("{:+.{}f}", v, digits) : "undefined";
}
// p-values: four decimals, scientific below 1e-4 so small ones do not read as zero.
inline std::string p_value(double p) {
  return !std::isfinite(p) ? "undefined"
         : p < 1e-4        ? fmt::format("{:.1e}", p)
                           : fmt::format("{:.4f}", p);
}

}  // namespace lmeval::analysis::format

// Answers as JSON, shared by the response cache and the shard files: bit-exact doubles, and
// infinities (which JSON lacks) as the strings "-inf", "inf", "nan".
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "lmeval/models/lm.hpp"

namespace lmeval::response_json {

inline Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json(v < 0 ? "-inf" : v > 0 ? "inf" : "nan");
}

inline double number(const Json& v) {
  if (!v.is_string()) return v.get<double>();
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::invalid_argument("not a number: " + s);
}

inline Json encode(const LoglikelihoodResult& r) {
  return Json::array({number(r.loglikelihood), r.is_greedy});
}
inline Json encode(double v) { return number(v); }
inline Json encode(const std::string& s) { return Json(s); }

inline void decode(const Json& v, LoglikelihoodResult& r) {
  r = {number(v.at(0)), v.at(1).get<bool>()};
}
inline void decode(const Json& v, double& r) { r = number(v); }
inline void decode(const Json& v, std::string& r) { r = v.get<std::string>(); }

// The arguments a request is identified by, as the reference lists them per request type.
inline Json arguments(const LoglikelihoodRequest& r) {
  return Json::array({r.context, r.continuation});
}
inline Json arguments(const std::string& text) { return Json::array({text}); }
inline Json arguments(const GenerationRequest& r) { return Json::array({r.context, r.gen_kwargs}); }

}  // namespace lmeval::response_json

// Coercion of model_args values for backends (shared by every model that reads typed arguments).
#include "lmeval/models/model_args.hpp"

#include <algorithm>
#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::model_args {

std::string as_string(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
    return std::to_string(d);
  }
  if (v.is_null()) return "None";
  return v.dump();
}

bool is_none(const Json& v) {
  return v.is_null() || (v.is_string() && (v == "None" || v == "none"));
}

int64_t as_int(const Json& v, const std::string& key) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()) &&
      std::fabs(v.get<double>()) < 9.2e18)
    return static_cast<int64_t>(v.get<double>());
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      size_t used = 0;
      int64_t n = std::stoll(s, &used);
      if (used == s.size()) return n;
    } catch (...) {
    }
  }
  throw UserError("model_args " + key + "=" + as_string(v) + " is not an integer",
                  {"", 0, 0, "--model_args " + key}, "an integer");
}

int64_t as_int_in_range(const Json& v, const std::string& key, int64_t lo, int64_t hi) {
  int64_t n = as_int(v, key);
  if (n < lo || n > hi)
    throw UserError("model_args " + key + "=" + std::to_string(n) + " is out of range",
                    {"", 0, 0, "--model_args " + key},
                    "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

double as_double(const Json& v, const std::string& key) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      size_t used = 0;
      double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (...) {
    }
  }
  throw UserError("model_args " + key + "=" + as_string(v) + " is not a number",
                  {"", 0, 0, "--model_args " + key}, "a number");
}

bool as_bool(const Json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  if (v.is_string()) {
    std::string s = unicode::py_lower(v.get<std::string>());
    if (s == "true" || s == "1" || s == "yes") return true;
    if (s == "false" || s == "0" || s == "no") return false;
  }
  throw UserError("model_args " + key + "=" + as_string(v) + " is not a boolean",
                  {"", 0, 0, "--model_args " + key}, "True or False");
}

void check_known(const Json& args, const std::string& model,
                 const std::vector<std::string>& known) {
  if (args.is_null()) return;
  if (!args.is_object())
    throw UserError("model_args must be key=value pairs", {"", 0, 0, "--model_args"},
                    "key=value,...");
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw UserError("unknown model_args key '" + it.key() + "' for model " + model,
                    {"", 0, 0, "--model_args " + it.key()}, "one of " + list);
  }
}

}  // namespace lmeval::model_args

// Python's text forms of values: float repr, str/repr of strings, json.dumps-compatible output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::py {

// repr(float): shortest round-trip digits; exponent form when exp < -4 or >= 16
// ("1e-05", "1e+16", "0.0001", "1.0", "inf", "-inf", "nan").
std::string float_repr(double v);

// repr(str): single quotes unless the text has ' and no " (then double quotes); escapes
// \\, the chosen quote, \n \r \t, other non-printable characters as \xNN / \uNNNN / \UNNNNNNNN.
std::string str_repr(std::string_view s);

// str(value) / repr(value) of a JSON value as Python would print the equivalent object
// (dict -> {'k': v}, list -> [..], null -> None, bool -> True/False, float -> float_repr).
std::string str(const Json& v);
std::string repr(const Json& v);

// A mapping key that Python holds as a bool, int, float or None (PyYAML reads `yes:` as True,
// `1:` as 1) kept in a JSON object: "\x1f" + its type letter (b, i, f, n) + its repr. repr()
// prints it as Python prints the key (True), json_dumps as json.dumps does ("true").
std::string typed_key(const Json& key);
// The key's Python value when `key` came from typed_key; nullopt for a plain string key.
std::optional<Json> typed_key_value(const std::string& key);
// The key as repr() of its dict prints it: 'text' for a string, True / 1 / 1.5 / None otherwise.
std::string key_repr(const std::string& key);

// str() of a 1-D float64 numpy array with numpy's default print options (precision 8, floatmode
// maxprec, linewidth 75): "[0.25 0.75]", "[0.5  0.25]", "[1.e-05 5.e-01]", as the reference's
// handle_non_serializable writes an array into samples.
std::string numpy_array_str(const std::vector<double>& values);

struct JsonDumpOptions {
  int indent = -1;  // -1: compact with ", " and ": " separators (json.dumps default)
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// json.dumps(v, ...) byte for byte (floats via float_repr; NaN/Infinity bare tokens).
std::string json_dumps(const Json& v, const JsonDumpOptions& opts = {});

}  // namespace lmeval::py

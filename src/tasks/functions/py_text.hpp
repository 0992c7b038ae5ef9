// Python str operations on UTF-8 text that the ports of the reference's task helpers share
// (code-point slicing, str.split(sep), the truth value of a returned object).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::tasks::pytext {

// s[:-1]: all but the last code point ("" stays "").
inline std::string drop_last(std::string_view s) {
  std::u32string u = unicode::decode(s);
  if (!u.empty()) u.pop_back();
  return unicode::encode(u);
}

// s[0].lower() + s[1:] (copa's and xcopa's convert_choice); s[0] of "" is an IndexError.
inline std::string lower_first(std::string_view s, const char* what) {
  std::u32string u = unicode::decode(s);
  if (u.empty()) throw UserError(std::string(what) + ": string index out of range (empty choice)");
  return unicode::py_lower(unicode::encode(u.substr(0, 1))) + unicode::encode(u.substr(1));
}

// str.split(sep) with an explicit separator: empty fields kept.
inline std::vector<std::string> split_sep(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(sep, pos);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  out.emplace_back(s.substr(pos));
  return out;
}

inline std::string join(const std::vector<std::string>& parts, std::string_view sep, size_t from,
                        size_t to) {
  std::string out;
  for (size_t i = from; i < to && i < parts.size(); ++i) {
    if (i > from) out += sep;
    out += parts[i];
  }
  return out;
}

// bool(x) for the values a helper returns (tuples as arrays).
inline bool truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  if (v.is_number_unsigned()) return v.get<uint64_t>() != 0;
  if (v.is_number_float()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return !v.empty();
}

}  // namespace lmeval::tasks::pytext

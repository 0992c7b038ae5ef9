// k=v argument parsing with the reference's coercions.
#include "lmeval/config/arg_parsing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval {

namespace {

std::string lower_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool all_decimal(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// CPython's int() and float() read any decimal digit (category Nd: '٣', '３') as its ASCII
// digit before parsing (_PyUnicode_TransformDecimalAndSpaceToASCII); the rest is kept as it is.
std::string ascii_decimals(std::string_view s) {
  std::string out;
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view raw) {
    int d = c < 0x80 ? -1 : unicode::py_decimal(c);
    if (d >= 0)
      out += static_cast<char>('0' + d);
    else
      out += raw;
  });
  return out;
}

}  // namespace

bool python_float(const std::string& raw, double& out) {
  std::string s = ascii_decimals(unicode::py_strip(raw));
  if (s.empty()) return false;
  std::string l = lower_ascii(s);
  std::string body = l;
  double sign = 1;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    if (body[0] == '-') sign = -1;
    body = body.substr(1);
  }
  if (body == "inf" || body == "infinity") {
    out = sign * INFINITY;
    return true;
  }
  if (body == "nan") {
    out = NAN;
    return true;
  }
  // Underscores only between digits.
  std::string cleaned;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1])))
        return false;
      continue;
    }
    cleaned += s[i];
  }
  // Only decimal float syntax: [sign] digits [. digits] [e [sign] digits]
  size_t i = 0;
  if (i < cleaned.size() && (cleaned[i] == '+' || cleaned[i] == '-')) ++i;
  size_t digits = 0;
  while (i < cleaned.size() && std::isdigit(static_cast<unsigned char>(cleaned[i]))) ++i, ++digits;
  if (i < cleaned.size() && cleaned[i] == '.') {
    ++i;
    while (i < cleaned.size() && std::isdigit(static_cast<unsigned char>(cleaned[i])))
      ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < cleaned.size() && (cleaned[i] == 'e' || cleaned[i] == 'E')) {
    ++i;
    if (i < cleaned.size() && (cleaned[i] == '+' || cleaned[i] == '-')) ++i;
    size_t ed = 0;
    while (i < cleaned.size() && std::isdigit(static_cast<unsigned char>(cleaned[i]))) ++i, ++ed;
    if (ed == 0) return false;
  }
  if (i != cleaned.size()) return false;
  out = std::strtod(cleaned.c_str(), nullptr);
  return true;
}

std::string python_int(const std::string& raw) {
  std::string s = ascii_decimals(unicode::py_strip(raw));
  std::string out;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') out += '-';
    ++i;
  }
  if (i == s.size()) return "";
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_' && !out.empty() && out.back() != '-' && i + 1 < s.size() &&
        std::isdigit(static_cast<unsigned char>(s[i + 1])))
      continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) return "";
    out += c;
  }
  return out;
}

Json cli_value(const std::string& v) {
  std::string l = lower_ascii(v);
  if (l == "true") return true;
  if (l == "false") return false;
  // str.isnumeric(): for the ASCII inputs of a command line, all decimal digits.
  if (unicode::py_isdigit(v)) {
    try {
      return static_cast<int64_t>(std::stoll(v));
    } catch (...) {
      return v;
    }
  }
  double d;
  if (python_float(v, d)) return d;
  try {
    return tmpl::literal_eval(v);
  } catch (const std::exception&) {
    return v;
  }
}

std::vector<std::string> split_top_level(const std::string& args) {
  std::vector<std::string> parts;
  std::string buf;
  int depth = 0;
  char quote = 0;
  for (char c : args) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if (c == ']' || c == ')' || c == '}') {
      depth = std::max(depth - 1, 0);
    } else if (c == ',' && depth == 0) {
      if (!buf.empty()) parts.push_back(std::move(buf));
      buf.clear();
      continue;
    }
    buf += c;
  }
  if (!buf.empty()) parts.push_back(std::move(buf));
  return parts;
}

Json cli_key_val_to_dict(const std::string& s, const std::string& flag) {
  Json out = Json::object();
  std::string last_key;
  for (const std::string& item : split_top_level(s)) {
    auto eq = item.find('=');
    // `peft=a,b`: adapters after the first continue its list (one run per adapter over one base).
    // The reference's simple_parse_args_string fails on the bare `b` (IndexError).
    if (eq == std::string::npos && last_key == "peft") {
      if (!out["peft"].is_array()) out["peft"] = Json::array({out["peft"]});
      out["peft"].push_back(item);
      continue;
    }
    if (eq == std::string::npos)
      throw UserError("expected `key=value`, got '" + mask_secrets(item) + "'", {"", 0, 0, flag},
                      "key=value pairs separated by commas outside brackets and quotes, or a "
                      "JSON object");
    last_key = item.substr(0, eq);
    out[last_key] = cli_value(item.substr(eq + 1));
  }
  return out;
}

Json merge_dict_flag(const std::vector<std::vector<std::string>>& occurrences,
                     const std::string& flag) {
  Json current = Json::object();
  for (const auto& values : occurrences) {
    if (values.empty()) continue;
    // Before any parser: a deep value would crash the recursive code that copies and prints it.
    for (const auto& v : values) require_json_nesting(v, SourceLocation{"", 0, 0, flag});
    Json parsed;
    bool is_json = false;
    try {
      parsed = Json::parse(values[0]);
      is_json = true;
    } catch (const std::exception&) {
      if (values[0].find('{') != std::string::npos)
        throw UserError("Invalid JSON: " + mask_secrets(values[0]) +
                            ". Hint: Use double quotes for JSON strings.",
                        {"", 0, 0, flag}, "a JSON object or key=value pairs");
    }
    if (is_json && parsed.is_object()) {
      for (auto it = parsed.begin(); it != parsed.end(); ++it) current[it.key()] = it.value();
      continue;  // the other values of this occurrence are ignored, as in the reference
    }
    for (const auto& v : values) {
      Json kv = cli_key_val_to_dict(v, flag);
      for (auto it = kv.begin(); it != kv.end(); ++it) current[it.key()] = it.value();
    }
  }
  return current;
}

Json arg_string_value(const std::string& raw) {
  std::string v(unicode::py_strip(raw));
  if (v.size() >= 2 && v.front() == v.back() && (v.front() == '\'' || v.front() == '"'))
    return v.substr(1, v.size() - 2);
  std::string l = lower_ascii(v);
  if (l == "true") return true;
  if (l == "false") return false;
  if (l == "none") return nullptr;
  if (!v.empty() && v != "+" && v != "-") {
    size_t i = 0;
    while (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (all_decimal(v.substr(i))) {
      try {
        // int() accepts one sign; repeated signs make int() fail and fall to float(), which
        // fails too, so the string is kept.
        if (i <= 1) return static_cast<int64_t>(std::stoll(v));
      } catch (...) {
      }
    }
  }
  double d;
  if (python_float(v, d)) return d;
  return v;
}

Json simple_parse_args_string(const std::string& s) {
  Json out = Json::object();
  std::string t(unicode::py_strip(s));
  if (t.empty()) return out;
  size_t start = 0;
  while (start <= t.size()) {
    size_t comma = t.find(',', start);
    std::string item =
        t.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) {
      auto eq = item.find('=');
      std::string key = item.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      out[key] = arg_string_value(value);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace lmeval

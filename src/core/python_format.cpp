// Python text forms of values (float repr, str/repr, json.dumps).
#include "lmeval/core/python_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::py {

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, then laid out by Python's float_repr_style
  // rules (format_float_short with repr mode: exponent form iff decpt < -4 or decpt > 16).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  auto epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp10 = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int decpt = exp10 + 1;  // position of the decimal point relative to digits
  std::string out;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out = "0." + std::string(-decpt, '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out = digits + std::string(decpt - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, decpt) + "." + digits.substr(decpt);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    int e = decpt - 1;
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", e < 0 ? '-' : '+', std::abs(e));
    out += eb;
  }
  return neg ? "-" + out : out;
}

static bool py_printable(char32_t c) {
  // Python's str.isprintable: not in categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (except space).
  if (c == U' ') return true;
  if (c < 0x20 || (c >= 0x7f && c < 0xa0)) return false;
  return !unicode::is_nonprintable_category(c);
}

std::string str_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view raw) {
    if (c == static_cast<char32_t>(quote) || c == U'\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == U'\n') {
      out += "\\n";
    } else if (c == U'\r') {
      out += "\\r";
    } else if (c == U'\t') {
      out += "\\t";
    } else if (!py_printable(c)) {
      char b[16];
      if (c < 0x100)
        std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000)
        std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      else
        std::snprintf(b, sizeof b, "\\U%08x", static_cast<unsigned>(c));
      out += b;
    } else {
      out.append(raw);
    }
  });
  out += quote;
  return out;
}

// repr(bytes): b'...' (b"..." when the bytes hold ' and no "), \\, the quote, \t \n \r escaped,
// other bytes outside printable ASCII as \xNN.
static std::string bytes_repr(const std::vector<std::uint8_t>& b) {
  bool sq = std::find(b.begin(), b.end(), '\'') != b.end();
  bool dq = std::find(b.begin(), b.end(), '"') != b.end();
  char quote = sq && !dq ? '"' : '\'';
  std::string out = "b";
  out += quote;
  static const char* hex = "0123456789abcdef";
  for (std::uint8_t c : b) {
    if (c == static_cast<std::uint8_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

static void repr_into(const Json& v, std::string& out, bool top_is_str);

namespace {

// Dragon4 in numpy's unique mode with a cutoff of `precision` fractional digits: the shortest
// round-trip digits, or the value correctly rounded to `precision` digits when those are more;
// trailing zeros dropped, the point kept ("1.", "0.25"). Scientific: mantissa "d.ddd" and
// exponent text ("-05").
void np_positional(double x, int precision, std::string& int_part, std::string& frac) {
  std::string r = float_repr(std::fabs(x));
  std::string digits;
  if (r.find('e') != std::string::npos || r.find('.') == std::string::npos ||
      r.size() - r.find('.') - 1 > static_cast<size_t>(precision)) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", precision, std::fabs(x));
    digits = buf;
  } else {
    digits = r;
  }
  size_t dot = digits.find('.');
  int_part = (std::signbit(x) ? "-" : "") + digits.substr(0, dot);
  frac = dot == std::string::npos ? "" : digits.substr(dot + 1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
}

void np_scientific(double x, int precision, std::string& int_part, std::string& frac,
                   std::string& exp) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17e", std::fabs(x));
  // The shortest round-trip mantissa: fewest digits whose %.Ne reads back as x.
  std::string best;
  for (int p = 0; p <= 16; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, std::fabs(x));
    if (std::strtod(buf, nullptr) == std::fabs(x) || p == 16) {
      best = buf;
      if (p > precision) {
        std::snprintf(buf, sizeof buf, "%.*e", precision, std::fabs(x));
        best = buf;
      }
      break;
    }
  }
  size_t e = best.find('e');
  std::string mant = best.substr(0, e);
  exp = best.substr(e + 1);
  if (exp[0] == '+') exp = exp.substr(1);
  size_t dot = mant.find('.');
  int_part = (std::signbit(x) ? "-" : "") + mant.substr(0, dot);
  frac = dot == std::string::npos ? "" : mant.substr(dot + 1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
}

std::string np_exponent(const std::string& exp, size_t digits) {
  bool neg = exp[0] == '-';
  std::string d = neg ? exp.substr(1) : exp;
  while (d.size() > 1 && d[0] == '0') d.erase(0, 1);
  while (d.size() < digits) d = "0" + d;
  return std::string(neg ? "-" : "+") + d;
}

}  // namespace

std::string numpy_array_str(const std::vector<double>& values) {
  const int precision = 8;
  std::vector<double> finite, nonzero;
  for (double v : values)
    if (std::isfinite(v)) {
      finite.push_back(v);
      if (v != 0) nonzero.push_back(std::fabs(v));
    }
  bool exp_format = false;
  if (!nonzero.empty()) {
    double mx = *std::max_element(nonzero.begin(), nonzero.end());
    double mn = *std::min_element(nonzero.begin(), nonzero.end());
    exp_format = mx >= 1e8 || mn < 0.0001 || mx / mn > 1000.;  // FloatingFormat.fillFormat
  }
  size_t pad_left = 0, pad_right = 0, frac_digits = 0, exp_size = 0;
  for (double v : finite) {
    std::string ip, fr, ex;
    if (exp_format) {
      np_scientific(v, precision, ip, fr, ex);
      exp_size = std::max(exp_size, np_exponent(ex, 2).size() - 1);
    } else {
      np_positional(v, precision, ip, fr);
    }
    pad_left = std::max(pad_left, ip.size());
    frac_digits = std::max(frac_digits, fr.size());
  }
  pad_right = exp_format ? exp_size + 2 + frac_digits : frac_digits;
  if (finite.size() != values.size()) {
    bool neginf = false;
    for (double v : values) neginf = neginf || (std::isinf(v) && v < 0);
    size_t offset = pad_right + 1;
    auto need = [&](size_t len) { return len > offset ? len - offset : 0; };
    pad_left = std::max({pad_left, need(3), need(3 + (neginf ? 1 : 0))});
  }
  std::vector<std::string> words;
  for (double v : values) {
    std::string w;
    if (!std::isfinite(v)) {
      std::string ret = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
      size_t width = pad_left + pad_right + 1;
      w = std::string(width > ret.size() ? width - ret.size() : 0, ' ') + ret;
    } else if (exp_format) {
      std::string ip, fr, ex;
      np_scientific(v, static_cast<int>(frac_digits), ip, fr, ex);
      while (fr.size() < frac_digits) fr += '0';
      w = std::string(pad_left - ip.size(), ' ') + ip + "." + fr + "e" + np_exponent(ex, exp_size);
    } else {
      std::string ip, fr;
      np_positional(v, precision, ip, fr);
      w = std::string(pad_left - ip.size(), ' ') + ip + "." + fr +
          std::string(pad_right - fr.size(), ' ');
    }
    words.push_back(std::move(w));
  }
  // _formatArray for one axis: lines of at most 74 characters, continued with one space.
  const size_t elem_width = 75 - 1;
  std::string s, line = " ";
  for (size_t i = 0; i < words.size(); ++i) {
    bool wrap = line.size() + words[i].size() > elem_width && line.size() > 1;
    if (wrap) {
      size_t end = line.find_last_not_of(' ');
      s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
      line = " ";
    }
    line += words[i];
    if (i + 1 < words.size()) line += ' ';
  }
  s += line;
  return "[" + s.substr(1) + "]";
}

std::string typed_key(const Json& key) {
  if (key.is_string()) return key.get<std::string>();
  char tag = key.is_boolean() ? 'b' : key.is_number_integer() ? 'i' : key.is_number() ? 'f' : 'n';
  std::string out = "\x1f";
  out += tag;
  repr_into(key, out, false);
  return out;
}

std::optional<Json> typed_key_value(const std::string& key) {
  if (key.size() < 3 || key[0] != '\x1f') return std::nullopt;
  std::string text = key.substr(2);
  switch (key[1]) {
    case 'b':
      return Json(text == "True");
    case 'n':
      return Json(nullptr);
    case 'i':
      try {
        return Json(static_cast<int64_t>(std::stoll(text)));
      } catch (...) {
        return std::nullopt;
      }
    case 'f':
      if (text == "inf") return Json(std::numeric_limits<double>::infinity());
      if (text == "-inf") return Json(-std::numeric_limits<double>::infinity());
      if (text == "nan") return Json(std::numeric_limits<double>::quiet_NaN());
      return Json(std::strtod(text.c_str(), nullptr));
    default:
      return std::nullopt;
  }
}

std::string key_repr(const std::string& key) {
  if (key.size() >= 3 && key[0] == '\x1f' && typed_key_value(key)) return key.substr(2);
  return str_repr(key);
}

std::string str(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  repr_into(v, out, false);
  return out;
}

std::string repr(const Json& v) {
  std::string out;
  repr_into(v, out, false);
  return out;
}

static void repr_into(const Json& v, std::string& out, bool) {
  switch (v.type()) {
    case Json::value_t::null:
      out += "None";
      break;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "True" : "False";
      break;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      break;
    case Json::value_t::number_float:
      out += float_repr(v.get<double>());
      break;
    case Json::value_t::string:
      out += str_repr(v.get_ref<const std::string&>());
      break;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ", ";
        first = false;
        repr_into(e, out, false);
      }
      out += ']';
      break;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += key_repr(it.key());
        out += ": ";
        repr_into(it.value(), out, false);
      }
      out += '}';
      break;
    }
    case Json::value_t::binary:
      out += bytes_repr(v.get_binary());
      break;
    default:
      out += "None";
      break;
  }
}

static void json_string(std::string_view s, bool ensure_ascii, std::string& out) {
  out += '"';
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view raw) {
    switch (c) {
      case U'"':
        out += "\\\"";
        return;
      case U'\\':
        out += "\\\\";
        return;
      case U'\n':
        out += "\\n";
        return;
      case U'\r':
        out += "\\r";
        return;
      case U'\t':
        out += "\\t";
        return;
      case U'\b':
        out += "\\b";
        return;
      case U'\f':
        out += "\\f";
        return;
      default:
        break;
    }
    char b[16];
    if (c < 0x20) {
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      out += b;
    } else if (ensure_ascii && c > 0x7e) {
      if (c >= 0x10000) {
        char32_t u = c - 0x10000;
        std::snprintf(b, sizeof b, "\\u%04x\\u%04x", static_cast<unsigned>(0xd800 + (u >> 10)),
                      static_cast<unsigned>(0xdc00 + (u & 0x3ff)));
      } else {
        std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      }
      out += b;
    } else {
      out.append(raw);
    }
  });
  out += '"';
}

static void dump_into(const Json& v, const JsonDumpOptions& o, int depth, std::string& out) {
  // Inputs are limited to kMaxNestingDepth levels when read; a value built deeper than twice
  // that is refused rather than recursed into (Python's json.dumps raises RecursionError).
  if (depth > 2 * kMaxNestingDepth)
    throw UserError("value nested more than " + std::to_string(2 * kMaxNestingDepth) +
                        " levels deep cannot be written as JSON",
                    {},
                    "at most " + std::to_string(kMaxNestingDepth) + " levels of nesting in inputs");
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(o.indent) * static_cast<size_t>(d), ' ');
  };
  switch (v.type()) {
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      return;
    case Json::value_t::number_float: {
      double d = v.get<double>();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d > 0 ? "Infinity" : "-Infinity";
      else
        out += float_repr(d);
      return;
    }
    case Json::value_t::string:
      json_string(v.get_ref<const std::string&>(), o.ensure_ascii, out);
      return;
    case Json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += o.indent >= 0 ? "," : ", ";
        first = false;
        if (o.indent >= 0) newline(depth + 1);
        dump_into(e, o, depth + 1, out);
      }
      if (o.indent >= 0) newline(depth);
      out += ']';
      return;
    }
    case Json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      std::vector<std::pair<std::string, const Json*>> items;
      for (auto it = v.begin(); it != v.end(); ++it) items.emplace_back(it.key(), &it.value());
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      bool first = true;
      for (const auto& [k, val] : items) {
        if (!first) out += o.indent >= 0 ? "," : ", ";
        first = false;
        if (o.indent >= 0) newline(depth + 1);
        if (auto tv = typed_key_value(k)) {
          // json.dumps writes a non-string key as its JSON text: true, 1, 1.5, null.
          std::string text;
          dump_into(*tv, o, depth + 1, text);
          json_string(text, o.ensure_ascii, out);
        } else {
          json_string(k, o.ensure_ascii, out);
        }
        out += ": ";
        dump_into(*val, o, depth + 1, out);
      }
      if (o.indent >= 0) newline(depth);
      out += '}';
      return;
    }
    case Json::value_t::binary:
      // json.dumps(default=str) as the reference's handle_non_serializable writes bytes.
      json_string(bytes_repr(v.get_binary()), o.ensure_ascii, out);
      return;
    default:
      out += "null";
      return;
  }
}

std::string json_dumps(const Json& v, const JsonDumpOptions& opts) {
  std::string out;
  dump_into(v, opts, 0, out);
  return out;
}

}  // namespace lmeval::py

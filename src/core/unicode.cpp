// UTF-8 helpers and Python str predicates.
#include "lmeval/core/unicode.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/unicode_case_data.hpp"

namespace lmeval::unicode {

static size_t decode_one(std::string_view s, size_t i, char32_t& out) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    out = b;
    return 1;
  }
  int n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b & 0xe0) == 0xc0) {
    n = 1;
    cp = b & 0x1f;
    min = 0x80;
  } else if ((b & 0xf0) == 0xe0) {
    n = 2;
    cp = b & 0x0f;
    min = 0x800;
  } else if ((b & 0xf8) == 0xf0) {
    n = 3;
    cp = b & 0x07;
    min = 0x10000;
  } else {
    out = 0xfffd;
    return 1;
  }
  for (int k = 1; k <= n; ++k) {
    if (i + k >= s.size()) {
      out = 0xfffd;
      return 1;
    }
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) {
      out = 0xfffd;
      return 1;
    }
    cp = (cp << 6) | (c & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    out = 0xfffd;
    return 1;
  }
  out = cp;
  return static_cast<size_t>(n) + 1;
}

void for_each_codepoint(std::string_view s,
                        const std::function<void(char32_t, std::string_view)>& fn) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t c;
    size_t n = decode_one(s, i, c);
    fn(c, c == 0xfffd && n == 1 && static_cast<unsigned char>(s[i]) >= 0x80
              ? std::string_view("\xef\xbf\xbd")
              : s.substr(i, n));
    i += n;
  }
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char32_t c;
    i += decode_one(s, i, c);
    out.push_back(c);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  size_t i = 0;
  while (i < s.size()) {
    char32_t c;
    i += decode_one(s, i, c);
    ++n;
  }
  return n;
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t c;
    size_t n = decode_one(s, i, c);
    if (c == 0xfffd && !(n == 3 && s.substr(i, 3) == "\xef\xbf\xbd")) return false;
    i += n;
  }
  return true;
}

bool py_isspace(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x1c:
    case 0x1d:
    case 0x1e:
    case 0x1f:
    case 0x20:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200a;
  }
}

std::vector<std::string> py_split(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for_each_codepoint(s, [&](char32_t c, std::string_view raw) {
    if (!py_isspace(c)) {
      word += raw;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  });
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// Category tests go through PCRE2's Unicode tables so no table is duplicated here.
static bool matches_class(char32_t c, const char* pattern) {
  static std::mutex mu;
  static std::unordered_map<std::string, pcre2_code*>* cache =
      new std::unordered_map<std::string, pcre2_code*>();
  pcre2_code* code;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(pattern);
    if (it == cache->end()) {
      int err;
      PCRE2_SIZE off;
      code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                           PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
      (*cache)[pattern] = code;
    } else {
      code = it->second;
    }
  }
  if (!code) return false;
  std::string s;
  append_utf8(s, c);
  pcre2_match_data* md = pcre2_match_data_create(4, nullptr);
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0,
                       PCRE2_NO_UTF_CHECK, md, nullptr);
  pcre2_match_data_free(md);
  return rc >= 0;
}

bool py_isdigit(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  // Nd plus the superscript/circled digits that Python counts as Numeric_Type=Digit.
  if (c == 0xb2 || c == 0xb3 || c == 0xb9) return true;
  if ((c >= 0x2070 && c <= 0x2079) || (c >= 0x2080 && c <= 0x2089))
    return c != 0x2071 && c != 0x2072 && c != 0x2073;
  if ((c >= 0x2460 && c <= 0x2468) || (c >= 0x2474 && c <= 0x247c) ||
      (c >= 0x2488 && c <= 0x2490) || c == 0x24ea || (c >= 0x24f5 && c <= 0x24fd) || c == 0x24ff ||
      (c >= 0x2776 && c <= 0x277e) || (c >= 0x2780 && c <= 0x2788) || (c >= 0x278a && c <= 0x2792))
    return true;
  return matches_class(c, "^\\p{Nd}$");
}

int py_decimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9' ? static_cast<int>(c - '0') : -1;
  if (!matches_class(c, "^\\p{Nd}$")) return -1;
  // Unicode assigns each set of decimal digits 0 to 9 to consecutive code points (a stability
  // guarantee), and sets may follow one another (the mathematical digits): the digit's value is
  // its distance from the start of its run of Nd code points, modulo 10.
  char32_t start = c;
  while (start > 0 && matches_class(start - 1, "^\\p{Nd}$")) --start;
  return static_cast<int>((c - start) % 10);
}

bool py_isdigit(std::string_view s) {
  if (s.empty()) return false;
  bool all = true;
  for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (!py_isdigit(c)) all = false;
  });
  return all;
}

bool is_nonprintable_category(char32_t c) {
  if (c == U' ') return false;
  return matches_class(c, "^[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Co}\\p{Cn}\\p{Zl}\\p{Zp}\\p{Zs}]$");
}

bool is_punctuation(char32_t c) {
  if (c < 0x80) {
    // ASCII characters of category P*; $ + < = > ^ ` | ~ are symbols (S*), not punctuation.
    static constexpr std::string_view kAsciiPunct = "!\"#%&'()*,-./:;?@[\\]_{}";
    return kAsciiPunct.find(static_cast<char>(c)) != std::string_view::npos;
  }
  return matches_class(c, "^\\p{P}$");
}

size_t decode_at(std::string_view s, size_t i, char32_t& out) { return decode_one(s, i, out); }

bool py_is_word_char(char32_t c) {
  if (c < 0x80) return std::isalnum(static_cast<int>(c)) != 0 || c == '_';
  return matches_class(c, "^[\\p{L}\\p{N}]$");
}

// XID_Start is L* and Nl plus Other_ID_Start, less Pattern_Syntax U+2E2F and the few characters
// whose NFKC form is no identifier (U+037A, U+0E33, U+0EB3, U+309B-C, U+FF9E-F: Unicode's
// DerivedCoreProperties).
bool py_is_id_start(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  switch (c) {
    case 0x1885:
    case 0x1886:
    case 0x2118:
    case 0x212e:  // Other_ID_Start
      return true;
    case 0x037a:
    case 0x0e33:
    case 0x0eb3:
    case 0x309b:
    case 0x309c:
    case 0x2e2f:
      return false;
    default:
      break;
  }
  if (c >= 0xfc5e && c <= 0xfc63) return false;  // Arabic ligatures whose NFKC starts with a mark
  if (c == 0xfdfa || c == 0xfdfb || c == 0xfe70 || c == 0xfe72 || c == 0xfe74 || c == 0xfe76 ||
      c == 0xfe78 || c == 0xfe7a || c == 0xfe7c || c == 0xfe7e || c == 0xff9e || c == 0xff9f)
    return false;
  return matches_class(c, "^[\\p{L}\\p{Nl}]$");
}

// XID_Continue: XID_Start, Mn, Mc, Nd, Pc and Other_ID_Continue.
bool py_is_id_continue(char32_t c) {
  if (c < 0x80) return std::isalnum(static_cast<int>(c)) != 0 || c == '_';
  if (c == 0x00b7 || c == 0x0387 || (c >= 0x1369 && c <= 0x1371) || c == 0x19da) return true;
  if (c == 0x037a || c == 0x309b || c == 0x309c || c == 0xfdfa || c == 0xfdfb || c == 0x2e2f)
    return false;
  if (c == 0x0e33 || c == 0x0eb3 || c == 0xff9e || c == 0xff9f) return true;
  if (py_is_id_start(c)) return true;
  return matches_class(c, "^[\\p{Mn}\\p{Mc}\\p{Nd}\\p{Pc}]$");
}

bool py_isidentifier(std::string_view s) {
  if (s.empty()) return false;
  bool first = true, ok = true;
  for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (!(first ? py_is_id_start(c) : py_is_id_continue(c))) ok = false;
    first = false;
  });
  return ok;
}

std::string_view py_lstrip(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t c;
    size_t n = decode_one(s, i, c);
    if (!py_isspace(c)) break;
    i += n;
  }
  return s.substr(i);
}

std::string_view py_rstrip(std::string_view s) {
  // Walk forward remembering the end of the last non-space code point.
  size_t i = 0, end = 0;
  while (i < s.size()) {
    char32_t c;
    size_t n = decode_one(s, i, c);
    i += n;
    if (!py_isspace(c)) end = i;
  }
  return s.substr(0, end);
}

std::string_view py_strip(std::string_view s) { return py_rstrip(py_lstrip(s)); }

namespace {

using case_data::CaseMapping;
using case_data::CodeRange;

const CaseMapping* find_mapping(const CaseMapping* table, size_t n, char32_t c) {
  const CaseMapping* end = table + n;
  const CaseMapping* it =
      std::lower_bound(table, end, c, [](const CaseMapping& m, char32_t x) { return m.from < x; });
  return it != end && it->from == c ? it : nullptr;
}

bool in_ranges(const CodeRange* table, size_t n, char32_t c) {
  const CodeRange* end = table + n;
  const CodeRange* it =
      std::upper_bound(table, end, c, [](char32_t x, const CodeRange& r) { return x < r.lo; });
  return it != table && (it - 1)->hi >= c;
}

bool is_cased(char32_t c) { return in_ranges(case_data::kCased, case_data::kCased_size, c); }
bool is_case_ignorable(char32_t c) {
  return in_ranges(case_data::kCaseIgnorable, case_data::kCaseIgnorable_size, c);
}

void append_mapped(std::string& out, const CaseMapping* table, size_t n, char32_t c) {
  if (const CaseMapping* m = find_mapping(table, n, c)) {
    for (char32_t t : m->to)
      if (t) append_utf8(out, t);
  } else {
    append_utf8(out, c);
  }
}

// CPython's handle_capital_sigma: Σ lowers to final ς when a cased letter precedes it and none
// follows it (case-ignorable characters skipped on both sides).
bool final_sigma(const std::vector<char32_t>& cps, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(cps[j - 1])) --j;
  if (j == 0 || !is_cased(cps[j - 1])) return false;
  size_t k = i + 1;
  while (k < cps.size() && is_case_ignorable(cps[k])) ++k;
  return k == cps.size() || !is_cased(cps[k]);
}

}  // namespace

std::string py_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool ascii = true;
  for (unsigned char ch : s) ascii = ascii && ch < 0x80;
  if (ascii) {
    for (char ch : s) out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
    return out;
  }
  std::vector<char32_t> cps;
  for_each_codepoint(s, [&](char32_t c, std::string_view) { cps.push_back(c); });
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == 0x3A3)
      append_utf8(out, final_sigma(cps, i) ? 0x3C2 : 0x3C3);
    else
      append_mapped(out, case_data::kLower, case_data::kLower_size, cps[i]);
  }
  return out;
}

std::string py_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (c < 0x80)
      out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    else
      append_mapped(out, case_data::kUpper, case_data::kUpper_size, c);
  });
  return out;
}

}  // namespace lmeval::unicode

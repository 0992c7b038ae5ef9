// Jinja filters and tests, Python str/list/dict methods, attribute/item lookup and operators.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "template/engine.hpp"

namespace lmeval::tmpl {

namespace {

[[noreturn]] void type_error(const std::string& m) { throw TypeErr{m}; }

const std::string& sref(const Value& v) { return v.j().get_ref<const std::string&>(); }

std::string need_str(const Value& v, const char* what) {
  if (!is_str(v)) type_error(std::string(what) + " must be str, not " + type_name(v));
  return sref(v);
}

int64_t need_int(const Value& v, const char* what) {
  if (!v.is_data() || !is_int_like(v.j()))
    type_error(std::string("'") + type_name(v) + "' object cannot be interpreted as an integer (" +
               what + ")");
  return as_int(v.j());
}

// Python's str.isspace per code point.
bool isspace_cp(char32_t c) { return unicode::py_isspace(c); }

char32_t cp_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  std::u32string s(1, c);
  auto l = u32(unicode::py_lower(u8(s)));
  return l.size() == 1 ? l[0] : c;
}
char32_t cp_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  std::u32string s(1, c);
  auto l = u32(unicode::py_upper(u8(s)));
  return l.size() == 1 ? l[0] : c;
}
std::string upper_s(std::string_view s) { return unicode::py_upper(s); }
std::string lower_s(std::string_view s) { return unicode::py_lower(s); }
bool is_cased(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  std::string one = u8(std::u32string(1, c));
  return lower_s(one) != one || upper_s(one) != one;
}

std::string title_cp(char32_t c);

std::string capitalize_s(const std::string& s) {
  std::u32string u = u32(s);
  if (u.empty()) return {};
  return title_cp(u[0]) + lower_s(u8(u.substr(1)));
}

// Unicode titlecase of one code point where it differs from the uppercase mapping.
std::string title_cp(char32_t c) {
  switch (c) {
    case 0x01C4:
    case 0x01C5:
    case 0x01C6:
      return "\u01C5";
    case 0x01C7:
    case 0x01C8:
    case 0x01C9:
      return "\u01C8";
    case 0x01CA:
    case 0x01CB:
    case 0x01CC:
      return "\u01CB";
    case 0x01F1:
    case 0x01F2:
    case 0x01F3:
      return "\u01F2";
    case 0x00DF:
      return "Ss";
    case 0xFB00:
      return "Ff";
    case 0xFB01:
      return "Fi";
    case 0xFB02:
      return "Fl";
    case 0xFB03:
      return "Ffi";
    case 0xFB04:
      return "Ffl";
    case 0xFB05:
    case 0xFB06:
      return "St";
    case 0x0587:
      return "\u0535\u0582";
    default:
      return upper_s(u8(std::u32string(1, c)));
  }
}

// Python str.title().
std::string py_title(const std::string& s) {
  std::u32string u = u32(s);
  std::string out;
  bool prev_cased = false;
  for (char32_t c : u) {
    std::u32string one(1, c);
    if (is_cased(c)) {
      out += prev_cased ? lower_s(u8(one)) : title_cp(c);
      prev_cased = true;
    } else {
      out += u8(one);
      prev_cased = false;
    }
  }
  return out;
}

// Jinja's title filter: capitalise each word split at [-\s({[<]+.
std::string jinja_title(const std::string& s) {
  std::u32string u = u32(s);
  std::string out;
  size_t i = 0;
  auto is_sep = [](char32_t c) {
    return isspace_cp(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  while (i < u.size()) {
    size_t j = i;
    if (is_sep(u[i])) {
      while (j < u.size() && is_sep(u[j])) ++j;
      out += u8(u.substr(i, j - i));
    } else {
      while (j < u.size() && !is_sep(u[j])) ++j;
      out += upper_s(u8(u.substr(i, 1))) + lower_s(u8(u.substr(i + 1, j - i - 1)));
    }
    i = j;
  }
  return out;
}

std::string strip_chars(const std::string& s, const Value* chars, bool left, bool right) {
  if (!chars || (chars->is_data() && chars->j().is_null())) {
    std::string_view v = s;
    if (left && right) return std::string(unicode::py_strip(v));
    if (left) return std::string(unicode::py_lstrip(v));
    return std::string(unicode::py_rstrip(v));
  }
  std::u32string set = u32(need_str(*chars, "strip arg"));
  std::u32string u = u32(s);
  size_t b = 0, e = u.size();
  if (left)
    while (b < e && set.find(u[b]) != std::u32string::npos) ++b;
  if (right)
    while (e > b && set.find(u[e - 1]) != std::u32string::npos) --e;
  return u8(u.substr(b, e - b));
}

Value str_list(const std::vector<std::string>& parts) {
  Json a = Json::array();
  for (const auto& p : parts) a.push_back(p);
  return Value::data(std::move(a));
}

std::vector<std::string> py_split(const std::string& s, const Value* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep || (sep->is_data() && sep->j().is_null())) {
    std::u32string u = u32(s);
    size_t i = 0, n = u.size();
    while (true) {
      while (i < n && isspace_cp(u[i])) ++i;
      if (i >= n) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
        size_t e = n;
        while (e > i && isspace_cp(u[e - 1])) --e;
        out.push_back(u8(u.substr(i, e - i)));
        break;
      }
      size_t j = i;
      while (j < n && !isspace_cp(u[j])) ++j;
      out.push_back(u8(u.substr(i, j - i)));
      i = j;
    }
    return out;
  }
  std::string d = need_str(*sep, "separator");
  if (d.empty()) type_error("empty separator");
  size_t i = 0;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) break;
    size_t f = s.find(d, i);
    if (f == std::string::npos) break;
    out.push_back(s.substr(i, f - i));
    i = f + d.size();
  }
  out.push_back(s.substr(i));
  return out;
}

std::vector<std::string> py_rsplit(const std::string& s, const Value* sep, int64_t maxsplit) {
  if (maxsplit < 0) return py_split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (!sep || (sep->is_data() && sep->j().is_null())) {
    std::u32string u = u32(s);
    int64_t e = u.size();
    while (true) {
      while (e > 0 && isspace_cp(u[e - 1])) --e;
      if (e <= 0) break;
      if (static_cast<int64_t>(out.size()) >= maxsplit) {
        size_t b = 0;
        while (static_cast<int64_t>(b) < e && isspace_cp(u[b])) ++b;
        out.push_back(u8(u.substr(b, e - b)));
        break;
      }
      int64_t b = e;
      while (b > 0 && !isspace_cp(u[b - 1])) --b;
      out.push_back(u8(u.substr(b, e - b)));
      e = b;
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  std::string d = need_str(*sep, "separator");
  if (d.empty()) type_error("empty separator");
  size_t end = s.size();
  while (static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < d.size()) break;
    size_t f = s.rfind(d, end - d.size());
    if (f == std::string::npos) break;
    out.push_back(s.substr(f + d.size(), end - f - d.size()));
    end = f;
  }
  out.push_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& nw,
                       int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `nw` between code points (and at both ends).
    int64_t done = 0;
    unicode::for_each_codepoint(s, [&](char32_t, std::string_view raw) {
      if (count < 0 || done < count) {
        out += nw;
        ++done;
      }
      out.append(raw);
    });
    if (count < 0 || done < count) out += nw;
    return out;
  }
  size_t i = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    size_t f = s.find(old, i);
    if (f == std::string::npos) break;
    out.append(s, i, f - i);
    out += nw;
    i = f + old.size();
    ++n;
  }
  out.append(s, i, std::string::npos);
  return out;
}

int64_t count_sub(const std::string& s, const std::string& sub) {
  if (sub.empty()) return static_cast<int64_t>(unicode::length(s)) + 1;
  int64_t n = 0;
  for (size_t i = s.find(sub); i != std::string::npos; i = s.find(sub, i + sub.size())) ++n;
  return n;
}

// Byte offset -> code point index.
int64_t cp_index(const std::string& s, size_t byte) {
  return static_cast<int64_t>(unicode::length(std::string_view(s).substr(0, byte)));
}

Value make_method(const Value& self, const std::string& name) {
  Value m;
  m.kind = Value::kMethod;
  auto bm = std::make_shared<BoundMethod>();
  bm->self = self;
  m.obj = bm;
  m.name = name;
  return m;
}

std::string object_type_repr(const Value& v) {
  if (v.is_data() && v.j().is_null()) return "None";
  return type_name(v) + " object";
}

// str.format with {} / {0} / {name} fields (no format specs beyond plain replacement).
std::string py_str_format(const std::string& f, const Args& a, bool strict) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c == '{') {
      if (i + 1 < f.size() && f[i + 1] == '{') {
        out += '{';
        ++i;
        continue;
      }
      size_t e = f.find('}', i);
      if (e == std::string::npos) type_error("Single '{' encountered in format string");
      std::string field = f.substr(i + 1, e - i - 1);
      std::string spec;
      if (auto colon = field.find(':'); colon != std::string::npos) {
        spec = field.substr(colon + 1);
        field = field.substr(0, colon);
      }
      char conv = 0;
      if (auto bang = field.find('!'); bang != std::string::npos) {
        if (bang + 2 != field.size()) type_error("expected ':' after conversion specifier");
        conv = field[bang + 1];
        field = field.substr(0, bang);
      }
      const Value* v = nullptr;
      if (field.empty()) {
        if (auto_idx < a.pos.size()) v = &a.pos[auto_idx];
        ++auto_idx;
      } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
        size_t k = std::stoul(field);
        if (k < a.pos.size()) v = &a.pos[k];
      } else {
        for (const auto& [k, x] : a.kw)
          if (k == field) v = &x;
        if (!v) type_error("KeyError: '" + field + "'");
      }
      if (!v) type_error("Replacement index out of range for format string");
      Value shown = *v;
      if (conv == 'r' || conv == 'a')
        shown = Value::data(py_repr(*v));
      else if (conv == 's')
        shown = Value::data(py_str(*v, strict));
      else if (conv)
        type_error(std::string("Unknown conversion specifier ") + conv);
      out += py_format_spec(shown, spec, strict);
      i = e;
    } else if (c == '}') {
      if (i + 1 < f.size() && f[i + 1] == '}') ++i;
      out += '}';
    } else {
      out += c;
    }
  }
  return out;
}

Value str_method(const Env& env, const Value& self, const std::string& n, const Args& a) {
  const std::string& s = sref(self);
  auto arg = [&](size_t i, const char* name) { return a.get(i, name); };
  if (n == "strip" || n == "lstrip" || n == "rstrip")
    return Value::data(strip_chars(s, arg(0, "chars"), n != "rstrip", n != "lstrip"));
  if (n == "split" || n == "rsplit") {
    const Value* mx = arg(1, "maxsplit");
    int64_t m = mx ? need_int(*mx, "maxsplit") : -1;
    return str_list(n == "split" ? py_split(s, arg(0, "sep"), m) : py_rsplit(s, arg(0, "sep"), m));
  }
  if (n == "splitlines") {
    const Value* ke = arg(0, "keepends");
    return str_list(py_splitlines(s, ke && truthy(*ke, env.strict)));
  }
  if (n == "startswith" || n == "endswith") {
    const Value* p = arg(0, "prefix");
    if (!p) type_error(n + "() takes at least 1 argument (0 given)");
    std::vector<std::string> cands;
    if (p->is_data() && p->j().is_array()) {
      for (const auto& x : p->j()) {
        if (!x.is_string()) type_error("tuple for " + n + " must only contain str");
        cands.push_back(x.get<std::string>());
      }
    } else {
      cands.push_back(need_str(*p, n.c_str()));
    }
    for (const auto& c : cands) {
      if (n == "startswith"
              ? s.compare(0, c.size(), c) == 0 && s.size() >= c.size()
              : s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0)
        return Value::data(true);
    }
    return Value::data(false);
  }
  if (n == "upper") return Value::data(upper_s(s));
  if (n == "lower") return Value::data(lower_s(s));
  if (n == "title") return Value::data(py_title(s));
  if (n == "capitalize") return Value::data(capitalize_s(s));
  if (n == "swapcase") {
    std::string out;
    for (char32_t c : u32(s)) {
      std::u32string one(1, c);
      out += cp_lower(c) != c ? lower_s(u8(one)) : upper_s(u8(one));
    }
    return Value::data(out);
  }
  if (n == "replace") {
    const Value* o = arg(0, "old");
    const Value* w = arg(1, "new");
    if (!o || !w) type_error("replace expected at least 2 arguments");
    const Value* c = arg(2, "count");
    return Value::data(py_replace(s, need_str(*o, "replace arg"), need_str(*w, "replace arg"),
                                  c ? need_int(*c, "count") : -1));
  }
  if (n == "format") return Value::data(py_str_format(s, a, env.strict));
  if (n == "join") {
    const Value* it = arg(0, "iterable");
    if (!it) type_error("join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const auto& x : iterate(*it, env.strict)) {
      if (!first) out += s;
      first = false;
      if (!is_str(x))
        type_error("sequence item: expected str instance, " + type_name(x) + " found");
      out += sref(x);
    }
    return Value::data(out);
  }
  if (n == "find" || n == "index" || n == "rfind" || n == "rindex") {
    const Value* sub = arg(0, "sub");
    if (!sub) type_error(n + "() takes at least 1 argument (0 given)");
    std::string t = need_str(*sub, "must be str");
    size_t f = (n == "find" || n == "index") ? s.find(t) : s.rfind(t);
    if (f == std::string::npos) {
      if (n == "index" || n == "rindex") type_error("substring not found");
      return Value::data(static_cast<int64_t>(-1));
    }
    return Value::data(cp_index(s, f));
  }
  if (n == "count") {
    const Value* sub = arg(0, "sub");
    if (!sub) type_error("count() takes at least 1 argument (0 given)");
    return Value::data(count_sub(s, need_str(*sub, "must be str")));
  }
  auto all_cp = [&](auto pred) {
    std::u32string u = u32(s);
    if (u.empty()) return false;
    for (char32_t c : u)
      if (!pred(c)) return false;
    return true;
  };
  if (n == "isdigit") return Value::data(unicode::py_isdigit(s) && !s.empty());
  if (n == "isspace") return Value::data(all_cp(isspace_cp));
  if (n == "isalpha")
    return Value::data(
        all_cp([](char32_t c) { return c >= 0x80 ? is_cased(c) : std::isalpha(c) != 0; }));
  if (n == "isalnum")
    return Value::data(
        all_cp([](char32_t c) { return c >= 0x80 ? is_cased(c) : std::isalnum(c) != 0; }));
  if (n == "isnumeric" || n == "isdecimal")
    return Value::data(unicode::py_isdigit(s) && !s.empty());
  if (n == "islower" || n == "isupper") {
    bool any = false, ok = true;
    for (char32_t c : u32(s)) {
      if (!is_cased(c)) continue;
      any = true;
      if (n == "islower" ? cp_lower(c) != c : cp_upper(c) != c) ok = false;
    }
    return Value::data(any && ok);
  }
  if (n == "removeprefix" || n == "removesuffix") {
    const Value* p = arg(0, "prefix");
    if (!p) type_error(n + "() takes exactly one argument (0 given)");
    std::string t = need_str(*p, n.c_str());
    if (n == "removeprefix" && s.compare(0, t.size(), t) == 0 && s.size() >= t.size())
      return Value::data(s.substr(t.size()));
    if (n == "removesuffix" && !t.empty() && s.size() >= t.size() &&
        s.compare(s.size() - t.size(), t.size(), t) == 0)
      return Value::data(s.substr(0, s.size() - t.size()));
    return Value::data(s);
  }
  if (n == "zfill") {
    int64_t w = need_int(*arg(0, "width"), "width");
    int64_t len = unicode::length(s);
    if (len >= w) return Value::data(s);
    std::string pad(w - len, '0');
    if (!s.empty() && (s[0] == '+' || s[0] == '-'))
      return Value::data(s.substr(0, 1) + pad + s.substr(1));
    return Value::data(pad + s);
  }
  if (n == "center" || n == "ljust" || n == "rjust") {
    int64_t w = need_int(*arg(0, "width"), "width");
    const Value* fc = arg(1, "fillchar");
    std::string fill = fc ? need_str(*fc, "fillchar") : " ";
    int64_t len = unicode::length(s);
    if (len >= w) return Value::data(s);
    int64_t total = w - len, left = 0;
    if (n == "rjust") left = total;
    if (n == "center") left = total / 2 + (total & w & 1);
    std::string out;
    for (int64_t i = 0; i < left; ++i) out += fill;
    out += s;
    for (int64_t i = 0; i < total - left; ++i) out += fill;
    return Value::data(out);
  }
  type_error("'str' object has no attribute '" + n + "'");
}

const char* const kStrMethods[] = {
    "strip",    "lstrip",       "rstrip",       "split",   "rsplit",     "splitlines", "startswith",
    "endswith", "upper",        "lower",        "title",   "capitalize", "swapcase",   "replace",
    "format",   "join",         "find",         "index",   "rfind",      "rindex",     "count",
    "isdigit",  "isspace",      "isalpha",      "isalnum", "isnumeric",  "isdecimal",  "islower",
    "isupper",  "removeprefix", "removesuffix", "zfill",   "center",     "ljust",      "rjust"};
const char* const kListMethods[] = {"index", "count", "copy"};
const char* const kDictMethods[] = {"items", "keys", "values", "get", "copy"};

template <size_t N>
bool in_list(const char* const (&l)[N], const std::string& n) {
  for (const char* x : l)
    if (n == x) return true;
  return false;
}

// Items of a dict as a list of (key, value) tuples.
Value dict_items(const Value& d) {
  std::vector<Value> items;
  for (auto it = d.j().begin(); it != d.j().end(); ++it)
    items.push_back(make_tuple({Value::data(it.key()), Value::child(d, it.value())}));
  return make_list(items);
}

Value loop_attr(const Value& lv, const std::string& n) {
  auto* l = static_cast<Loop*>(lv.obj.get());
  int64_t i = l->index0, len = l->items.size();
  if (n == "index") return Value::data(i + 1);
  if (n == "index0") return Value::data(i);
  if (n == "revindex") return Value::data(len - i);
  if (n == "revindex0") return Value::data(len - i - 1);
  if (n == "first") return Value::data(i == 0);
  if (n == "last") return Value::data(i == len - 1);
  if (n == "length") return Value::data(len);
  if (n == "depth") return Value::data(static_cast<int64_t>(l->depth0 + 1));
  if (n == "depth0") return Value::data(static_cast<int64_t>(l->depth0));
  if (n == "previtem") {
    if (i == 0) return Value::undefined("there is no previous item");
    return l->items[i - 1];
  }
  if (n == "nextitem") {
    if (i + 1 >= len) return Value::undefined("there is no next item");
    return l->items[i + 1];
  }
  if (n == "cycle") return make_method(lv, n);
  return Value::undefined("'LoopContext object' has no attribute '" + n + "'");
}

int64_t norm_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

// Python round() to `nd` decimals (correctly rounded, half-even on the exact binary value).
double py_round(double x, int64_t nd) {
  if (!std::isfinite(x)) return x;
  if (nd == 0) return std::nearbyint(x);
  if (nd > 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(nd, 300)), x);
    return std::strtod(buf, nullptr);
  }
  double p = std::pow(10.0, static_cast<double>(-nd));
  return std::nearbyint(x / p) * p;
}

// Python int(str) (base 10 or given base; whitespace, sign, underscores).
bool parse_py_int(const std::string& s0, int base, int64_t* out) {
  std::string s(unicode::py_strip(s0));
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
  if (base == 0 || base == 16 || base == 8 || base == 2) {
    if (i + 1 < s.size() && s[i] == '0') {
      char p = std::tolower(s[i + 1]);
      int b = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
      if (b && (base == 0 || base == b)) {
        base = b;
        i += 2;
        if (i < s.size() && s[i] == '_') ++i;
      }
    }
    if (base == 0) base = 10;
  }
  if (i >= s.size()) return false;
  int64_t v = 0;
  bool last_us = true;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      if (last_us) return false;
      last_us = true;
      continue;
    }
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'z') ? c - 'a' + 10
            : (c >= 'A' && c <= 'Z') ? c - 'A' + 10
                                     : 99;
    if (d >= base) return false;
    v = v * base + d;
    last_us = false;
  }
  if (last_us) return false;
  *out = neg ? -v : v;
  return true;
}

bool parse_py_float(const std::string& s0, double* out) {
  std::string s(unicode::py_strip(s0));
  if (s.empty()) return false;
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(s[i - 1]) || !std::isdigit(s[i + 1]))
        return false;
      continue;
    }
    t += s[i];
  }
  std::string low = lower_s(t);
  std::string body = (low[0] == '+' || low[0] == '-') ? low.substr(1) : low;
  if (body == "inf" || body == "infinity" || body == "nan") {
    double v = body == "nan" ? NAN : INFINITY;
    *out = low[0] == '-' ? -v : v;
    return true;
  }
  for (char c : body)
    if (!(std::isdigit(c) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end && *end == 0;
}

// Jinja's htmlsafe_json_dumps (sort_keys=True, ensure_ascii, <>&' escaped).
std::string html_json(const Json& j, int indent) {
  py::JsonDumpOptions o;
  o.sort_keys = true;
  o.ensure_ascii = true;
  o.indent = indent;
  std::string s = py::json_dumps(j, o);
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      case '\'':
        out += "\\u0027";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Value attr_path(const Env& env, const Value& v, const std::string& path) {
  Value cur = v;
  size_t i = 0;
  while (true) {
    size_t d = path.find('.', i);
    std::string part = path.substr(i, d == std::string::npos ? std::string::npos : d - i);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    cur = digits ? get_item(env, cur, Value::data(static_cast<int64_t>(std::stoll(part))))
                 : get_item(env, cur, Value::data(part));
    if (d == std::string::npos) break;
    i = d + 1;
  }
  return cur;
}

std::string indent_filter(const std::string& s0, const Value* width, bool first, bool blank) {
  std::string ind;
  if (width && is_str(*width))
    ind = sref(*width);
  else
    ind = std::string(width ? need_int(*width, "width") : 4, ' ');
  std::string s = s0 + "\n";
  std::vector<std::string> lines = py_splitlines(s, false);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + ind;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? std::string() : lines[0];
    if (lines.size() > 1) {
      rv += "\n";
      for (size_t i = 1; i < lines.size(); ++i) {
        if (i > 1) rv += "\n";
        rv += lines[i].empty() ? lines[i] : ind + lines[i];
      }
    }
  }
  if (first) rv = ind + rv;
  return rv;
}

Value sort_values(const Env& env, const std::vector<Value>& items, bool reverse,
                  bool case_sensitive, const Value* attribute) {
  auto key = [&](const Value& v) {
    Value k = attribute ? attr_path(env, v, py_str(*attribute, env.strict)) : v;
    if (!case_sensitive && is_str(k)) return Value::data(lower_s(sref(k)));
    return k;
  };
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& v : items) keyed.emplace_back(key(v), v);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? py_cmp(b.first, a.first) < 0 : py_cmp(a.first, b.first) < 0;
  });
  std::vector<Value> out;
  for (auto& [k, v] : keyed) out.push_back(v);
  return make_list(out);
}

}  // namespace

// ------------------------------------------------------------------------ lookups

bool has_method(const Value& self, const std::string& n) {
  if (!self.is_data()) return false;
  const Json& j = self.j();
  if (j.is_string()) return in_list(kStrMethods, n);
  if (j.is_array()) return in_list(kListMethods, n);
  if (j.is_object()) return in_list(kDictMethods, n);
  return false;
}

Value get_attr(const Env& env, const Value& obj, const std::string& name) {
  if (obj.is_undefined()) throw TypeErr{obj.name, true};
  if (obj.kind == Value::kNamespace) {
    if (Value* v = static_cast<Namespace*>(obj.obj.get())->find(name)) return *v;
    return Value::undefined("'Namespace object' has no attribute '" + name + "'");
  }
  if (obj.kind == Value::kLoop) return loop_attr(obj, name);
  if (obj.group && (name == "grouper" || name == "list"))
    return Value::child(obj, obj.j()[name == "grouper" ? 0 : 1]);
  if (has_method(obj, name)) return make_method(obj, name);
  if (obj.is_data() && obj.j().is_object()) {
    auto it = obj.j().find(name);
    if (it != obj.j().end()) return Value::child(obj, *it);
  }
  return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + name + "'");
}

std::string dict_key_for(const Json& dict, const Json& key) {
  auto number = [](const Json& v, double& d) {
    if (v.is_boolean())
      d = v.get<bool>() ? 1 : 0;
    else if (v.is_number())
      d = v.get<double>();
    else
      return false;
    return true;
  };
  double want = 0;
  bool numeric = number(key, want);
  for (auto it = dict.begin(); it != dict.end(); ++it) {
    auto tv = py::typed_key_value(it.key());
    if (!tv) continue;
    double have = 0;
    if (numeric ? (number(*tv, have) && have == want) : tv->is_null() && key.is_null())
      return it.key();
  }
  return py::typed_key(key);
}

Value get_item(const Env& env, const Value& obj, const Value& key) {
  if (obj.is_undefined()) throw TypeErr{obj.name, true};
  if (obj.kind == Value::kNamespace || obj.kind == Value::kLoop) {
    if (is_str(key)) return get_attr(env, obj, sref(key));
    return Value::undefined(object_type_repr(obj) + " has no element " + py_repr(key));
  }
  if (obj.is_data()) {
    const Json& j = obj.j();
    if ((j.is_array() || j.is_string()) && key.is_data() && is_int_like(key.j())) {
      int64_t i = as_int(key.j());
      if (j.is_array()) {
        int64_t n = j.size();
        int64_t k = norm_index(i, n);
        if (k >= 0 && k < n) return Value::child(obj, j[k]);
      } else {
        const std::string& s = j.get_ref<const std::string&>();
        if (is_ascii(s)) {
          int64_t n = s.size(), k = norm_index(i, n);
          if (k >= 0 && k < n) return Value::data(std::string(1, s[k]));
        } else {
          std::u32string u = u32(s);
          int64_t n = u.size(), k = norm_index(i, n);
          if (k >= 0 && k < n) return Value::data(u8(u.substr(k, 1)));
        }
      }
      return Value::undefined(type_name(obj) + " object has no element " + py_repr(key));
    }
    if (j.is_object() && key.is_data() &&
        (key.j().is_boolean() || key.j().is_number() || key.j().is_null())) {
      auto it = j.find(dict_key_for(j, key.j()));
      if (it != j.end()) return Value::child(obj, *it);
      return Value::undefined(type_name(obj) + " object has no element " + py_repr(key));
    }
    if (j.is_object() && is_str(key)) {
      auto it = j.find(sref(key));
      if (it != j.end()) return Value::child(obj, *it);
    }
  }
  if (is_str(key)) {
    if (has_method(obj, sref(key))) return make_method(obj, sref(key));
    return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + sref(key) + "'");
  }
  return Value::undefined(object_type_repr(obj) + " has no element " + py_repr(key));
}

Value slice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
  if (obj.is_undefined()) throw TypeErr{obj.name, true};
  auto opt = [](const Value* v) -> std::optional<int64_t> {
    if (!v || (v->is_data() && v->j().is_null())) return std::nullopt;
    return need_int(*v, "slice indices must be integers or None");
  };
  std::optional<int64_t> a = opt(start), b = opt(stop), c = opt(step);
  int64_t st = c.value_or(1);
  if (st == 0) type_error("slice step cannot be zero");
  auto run = [&](int64_t n, auto&& take) {
    int64_t lo, hi;
    if (st > 0) {
      lo = a ? (*a < 0 ? std::max<int64_t>(*a + n, 0) : std::min(*a, n)) : 0;
      hi = b ? (*b < 0 ? std::max<int64_t>(*b + n, 0) : std::min(*b, n)) : n;
      for (int64_t i = lo; i < hi; i += st) take(i);
    } else {
      lo = a ? (*a < 0 ? std::max<int64_t>(*a + n, -1) : std::min(*a, n - 1)) : n - 1;
      hi = b ? (*b < 0 ? std::max<int64_t>(*b + n, -1) : std::min(*b, n - 1)) : -1;
      for (int64_t i = lo; i > hi; i += st) take(i);
    }
  };
  // Jinja compiles slices to a plain Python subscript (no getitem fallback to Undefined).
  if (!obj.is_data()) type_error("'" + type_name(obj) + "' object is not subscriptable");
  if (obj.j().is_object()) type_error("unhashable type: 'slice'");
  const Json& j = obj.j();
  if (j.is_array()) {
    std::vector<Value> out;
    run(static_cast<int64_t>(j.size()), [&](int64_t i) { out.push_back(Value::child(obj, j[i])); });
    return obj.tuple ? make_tuple(std::move(out)) : make_list(out);
  }
  if (j.is_string()) {
    std::u32string u = u32(j.get_ref<const std::string&>());
    std::u32string out;
    run(static_cast<int64_t>(u.size()), [&](int64_t i) { out += u[i]; });
    return Value::data(u8(out));
  }
  type_error("'" + type_name(obj) + "' object is not subscriptable");
}

bool contains(const Value& container, const Value& item, bool strict) {
  // Python asks the container (its __contains__) first, so its type decides the error.
  if (container.is_undefined()) {
    if (strict) throw TypeErr{container.name, true};
    return false;
  }
  if (!container.is_data())
    type_error("argument of type '" + type_name(container) + "' is not iterable");
  const Json& c = container.j();
  if (c.is_string()) {
    if (!is_str(item))
      type_error("'in <string>' requires string as left operand, not " +
                 (item.is_undefined() ? std::string(strict ? "StrictUndefined" : "Undefined")
                                      : type_name(item)));
    return c.get_ref<const std::string&>().find(sref(item)) != std::string::npos;
  }
  if (c.is_array()) {
    if (item.is_undefined()) {
      if (strict && !c.empty()) throw TypeErr{item.name, true};  // __eq__ raises
      return false;
    }
    if (!item.is_data()) return false;
    for (const auto& e : c)
      if (py_eq(Value::child(container, e), item)) return true;
    return false;
  }
  if (c.is_object()) {
    if (item.is_undefined()) {
      if (strict) throw TypeErr{item.name, true};  // __hash__ raises
      return false;
    }
    if (item.is_data() && (item.j().is_object() || (item.j().is_array() && !item.tuple)))
      type_error(std::string("unhashable type: '") + type_name(item) + "'");
    if (!is_str(item)) return false;
    return c.contains(sref(item));
  }
  type_error("argument of type '" + type_name(container) + "' is not iterable");
}

// ------------------------------------------------------------------------ operators

Value binary_op(const std::string& op, const Value& a, const Value& b, bool strict) {
  if (op == "%" && is_str(a) && b.is_undefined())
    return Value::data(py_format_percent(sref(a), b, strict));
  if (a.is_undefined()) throw TypeErr{a.name.empty() ? "undefined value" : a.name, true};
  if (b.is_undefined()) throw TypeErr{b.name.empty() ? "undefined value" : b.name, true};
  auto unsupported = [&]() {
    type_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" +
               type_name(b) + "'");
  };
  if (!a.is_data() || !b.is_data()) unsupported();
  const Json& x = a.j();
  const Json& y = b.j();
  bool xn = x.is_number() || x.is_boolean(), yn = y.is_number() || y.is_boolean();
  if (op == "+") {
    if (x.is_string() && y.is_string())
      return Value::data(x.get_ref<const std::string&>() + y.get_ref<const std::string&>());
    if (x.is_array() && y.is_array() && a.tuple == b.tuple) {
      std::vector<Value> out = elements(a), rhs = elements(b);
      out.insert(out.end(), rhs.begin(), rhs.end());
      return a.tuple ? make_tuple(std::move(out)) : make_list(out);
    }
    if (!(xn && yn)) {
      if (x.is_string() && !y.is_string())
        type_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
      unsupported();
    }
  }
  if (op == "*") {
    if ((x.is_string() || x.is_array()) && is_int_like(y)) {
      int64_t n = as_int(y);
      size_t unit = x.is_string() ? x.get_ref<const std::string&>().size() : x.size();
      if (n > 0 && unit > 0 && static_cast<uint64_t>(n) > (uint64_t{1} << 30) / unit)
        type_error("repeated sequence would be too large");
      if (x.is_string()) {
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += x.get_ref<const std::string&>();
        return Value::data(out);
      }
      std::vector<Value> items = elements(a), out;
      for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
      return a.tuple ? make_tuple(std::move(out)) : make_list(out);
    }
    if ((y.is_string() || y.is_array()) && is_int_like(x)) return binary_op(op, b, a, strict);
  }
  if (op == "%" && x.is_string())
    return Value::data(py_format_percent(x.get<std::string>(), b, strict));
  if (!(xn && yn)) unsupported();
  bool ints = is_int_like(x) && is_int_like(y);
  if (op == "/") {
    double d = as_double(y);
    if (d == 0) type_error("division by zero");
    return Value::data(as_double(x) / d);
  }
  if (ints) {
    int64_t p = as_int(x), q = as_int(y), r = 0;
    auto overflow = []() {
      type_error("integer result does not fit in 64 bits (Python big ints are not supported)");
    };
    if (op == "+") {
      if (__builtin_add_overflow(p, q, &r)) overflow();
      return Value::data(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(p, q, &r)) overflow();
      return Value::data(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(p, q, &r)) overflow();
      return Value::data(r);
    }
    if (op == "//" || op == "%") {
      if (q == 0) type_error("integer division or modulo by zero");
      int64_t d = p / q, m = p % q;
      if (m != 0 && ((m < 0) != (q < 0))) {
        --d;
        m += q;
      }
      return Value::data(op == "//" ? d : m);
    }
    if (op == "**") {
      if (q < 0 && p == 0) type_error("0.0 cannot be raised to a negative power");
      if (q < 0) return Value::data(std::pow(static_cast<double>(p), static_cast<double>(q)));
      r = 1;
      int64_t b = p;
      for (int64_t e = q; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r)) overflow();
        if (e > 1 && __builtin_mul_overflow(b, b, &b)) overflow();
      }
      return Value::data(r);
    }
  } else {
    double p = as_double(x), q = as_double(y);
    if (op == "+") return Value::data(p + q);
    if (op == "-") return Value::data(p - q);
    if (op == "*") return Value::data(p * q);
    if (op == "//" || op == "%") {
      if (q == 0) type_error(op == "%" ? "float modulo" : "float floor division by zero");
      // CPython's float_divmod.
      double mod = std::fmod(p, q);
      double div = (p - mod) / q;
      if (mod != 0) {
        if ((q < 0) != (mod < 0)) {
          mod += q;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, q);
      }
      double floordiv;
      if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
      } else {
        floordiv = std::copysign(0.0, p / q);
      }
      return Value::data(op == "%" ? mod : floordiv);
    }
    if (op == "**") {
      if (p == 0 && q < 0) type_error("0.0 cannot be raised to a negative power");
      if (p < 0 && std::isfinite(q) && q != std::floor(q))
        type_error("a negative number raised to a fractional power is complex (not supported)");
      return Value::data(std::pow(p, q));
    }
  }
  unsupported();
  return {};
}

// ------------------------------------------------------------------------ methods

Value call_method(const Env& env, const Value& self, const std::string& n, const Args& a) {
  if (self.kind == Value::kLoop && n == "cycle") {
    if (a.pos.empty()) type_error("no items for cycling given");
    auto* l = static_cast<Loop*>(self.obj.get());
    return a.pos[l->index0 % a.pos.size()];
  }
  if (!self.is_data()) type_error("'" + type_name(self) + "' has no method '" + n + "'");
  const Json& j = self.j();
  if (j.is_string()) return str_method(env, self, n, a);
  if (j.is_array()) {
    if (n == "index") {
      const Value* x = a.get(0, "value");
      if (!x) type_error("index expected at least 1 argument, got 0");
      for (size_t i = 0; i < j.size(); ++i)
        if (x->is_data() && json_eq(j[i], x->j())) return Value::data(static_cast<int64_t>(i));
      type_error(py_repr(*x) + " is not in list");
    }
    if (n == "count") {
      const Value* x = a.get(0, "value");
      if (!x) type_error("count() takes exactly one argument (0 given)");
      int64_t c = 0;
      for (const auto& e : j)
        if (x->is_data() && json_eq(e, x->j())) ++c;
      return Value::data(c);
    }
    if (n == "copy") {
      Value v = Value::data(j);
      v.inner = self.inner;
      return v;
    }
  }
  if (j.is_object()) {
    if (n == "items") {
      Value v = dict_items(self);
      v.view = 1;
      return v;
    }
    if (n == "keys" || n == "values") {
      std::vector<Value> out;
      for (auto it = j.begin(); it != j.end(); ++it)
        out.push_back(n == "keys" ? Value::data(it.key()) : Value::child(self, it.value()));
      Value v = make_list(out);
      v.view = n == "keys" ? 2 : 3;
      return v;
    }
    if (n == "get") {
      const Value* k = a.get(0, "key");
      if (!k) type_error("get expected at least 1 argument, got 0");
      if (is_str(*k)) {
        auto it = j.find(sref(*k));
        if (it != j.end()) return Value::child(self, *it);
      }
      const Value* d = a.get(1, "default");
      return d ? *d : Value::data(nullptr);
    }
    if (n == "copy") {
      Value v = Value::data(j);
      v.inner = self.inner;
      return v;
    }
  }
  type_error("'" + type_name(self) + "' object has no attribute '" + n + "'");
}

// ------------------------------------------------------------------------ tests

bool is_builtin_filter(const std::string& n, bool chat) {
  static const char* const kFilters[] = {
      "trim",       "lower",      "upper",     "title",     "capitalize",
      "string",     "safe",       "e",         "escape",    "forceescape",
      "replace",    "join",       "length",    "count",     "first",
      "last",       "list",       "reverse",   "int",       "float",
      "abs",        "round",      "default",   "d",         "tojson",
      "indent",     "center",     "wordcount", "items",     "dictsort",
      "sort",       "unique",     "min",       "max",       "sum",
      "batch",      "slice",      "map",       "select",    "reject",
      "selectattr", "rejectattr", "format",    "attr",      "pprint",
      "truncate",   "wordwrap",   "urlize",    "striptags", "filesizeformat",
      "xmlattr",    "urlencode",  "groupby",   "random"};
  if (n == "regex_replace") return !chat;
  for (const char* f : kFilters)
    if (n == f) return true;
  return false;
}
bool is_builtin_test(const std::string& n) {
  static const char* const kTests[] = {
      "defined", "undefined", "none",        "string",   "mapping",  "number",   "integer", "float",
      "boolean", "true",      "false",       "iterable", "sequence", "callable", "lower",   "upper",
      "even",    "odd",       "divisibleby", "eq",       "equalto",  "==",       "ne",      "!=",
      "in",      "sameas",    "lt",          "<",        "le",       "<=",       "gt",      ">",
      "ge",      ">=",        "greaterthan", "lessthan", "escaped",  "filter",   "test"};
  for (const char* f : kTests)
    if (n == f) return true;
  return false;
}

bool apply_test(const Env& env, const std::string& n, const Value& v, const Args& a) {
  const Value* arg = a.get(0, "other");
  {
    // Jinja's tests are plain functions: extra arguments are a Python TypeError.
    static const char* const kOneArg[] = {
        "divisibleby", "eq", "equalto", "==", "ne", "!=",          "lt",       "<",  "le",
        "<=",          "gt", ">",       "ge", ">=", "greaterthan", "lessthan", "in", "sameas"};
    size_t max_args = in_list(kOneArg, n) ? 1 : 0;
    size_t given = a.pos.size() + a.kw.size();
    if (given > max_args)
      type_error("test_" + n + "() takes " + std::to_string(max_args + 1) +
                 " positional argument(s) but " + std::to_string(given + 1) + " were given");
  }
  if ((n == "even" || n == "odd" || n == "divisibleby") && v.is_undefined())
    throw TypeErr{v.name, true};  // Undefined.__mod__ raises
  const Json* j = v.is_data() ? &v.j() : nullptr;
  if (n == "defined") return !v.is_undefined();
  // jinja2 3.1 test_filter / test_test: a name of the environment's filters / tests.
  if (n == "filter")
    return j && j->is_string() && is_builtin_filter(j->get<std::string>(), env.chat);
  if (n == "test") return j && j->is_string() && is_builtin_test(j->get<std::string>());
  if (n == "undefined") return v.is_undefined();
  if (n == "none") return j && j->is_null();
  if (n == "string") return j && j->is_string();
  if (n == "mapping") return (j && j->is_object()) || v.kind == Value::kNamespace;
  if (n == "number") return j && (j->is_number() || j->is_boolean());
  if (n == "integer") return j && j->is_number_integer();
  if (n == "float") return j && j->is_number_float();
  if (n == "boolean") return j && j->is_boolean();
  if (n == "true") return j && j->is_boolean() && j->get<bool>();
  if (n == "false") return j && j->is_boolean() && !j->get<bool>();
  if (n == "iterable") {
    if (v.is_undefined()) {
      if (env.strict) throw TypeErr{v.name, true};
      return true;
    }
    return (j && (j->is_string() || j->is_array() || j->is_object())) || v.kind == Value::kLoop;
  }
  if (n == "sequence") {
    // len(value) raising (StrictUndefined) is caught by test_sequence
    if (v.is_undefined()) return !env.strict;
    return j && (j->is_string() || j->is_array() || j->is_object());
  }
  if (n == "callable")
    return v.kind == Value::kMethod || v.kind == Value::kMacro || v.kind == Value::kFunction;
  if (n == "lower" || n == "upper") {
    // str(value).islower() / .isupper(): at least one cased character, all in that case.
    std::string s = py_str(v, env.strict);
    bool any = false;
    for (char32_t c : u32(s)) {
      if (!is_cased(c)) continue;
      any = true;
      std::string one = u8(std::u32string(1, c));
      if (n == "lower" ? lower_s(one) != one : upper_s(one) != one) return false;
    }
    return any;
  }
  if (n == "even" || n == "odd") {
    // value % 2 == 1 / == 0 with Python's operators (floats included)
    Value two = Value::data(static_cast<int64_t>(2));
    Value r = binary_op("%", v, two, env.strict);
    return py_eq(r, Value::data(static_cast<int64_t>(n == "odd" ? 1 : 0)));
  }
  if (n == "divisibleby") {
    if (!arg) type_error("divisibleby needs an argument");
    Value r = binary_op("%", v, *arg, env.strict);
    return py_eq(r, Value::data(static_cast<int64_t>(0)));
  }
  if (n == "eq" || n == "equalto" || n == "==") return arg && py_eq(v, *arg);
  if (n == "ne" || n == "!=") return !(arg && py_eq(v, *arg));
  if (n == "in") {
    if (!arg) type_error("in test needs an argument");
    return contains(*arg, v, env.strict);
  }
  if (n == "sameas") {
    if (!arg) type_error("sameas needs an argument");
    if (j && arg->is_data()) {
      const Json& k = arg->j();
      if (j->is_null() || j->is_boolean()) return j->type() == k.type() && *j == k;
      return j == &k;
    }
    return v.obj && v.obj == arg->obj;
  }
  if (n == "lt" || n == "<" || n == "le" || n == "<=" || n == "gt" || n == ">" || n == "ge" ||
      n == ">=" || n == "greaterthan" || n == "lessthan") {
    if (!arg) type_error("comparison test needs an argument");
    int c = py_cmp(v, *arg);
    if (n == "lt" || n == "<" || n == "lessthan") return c < 0;
    if (n == "le" || n == "<=") return c <= 0;
    if (n == "gt" || n == ">" || n == "greaterthan") return c > 0;
    return c >= 0;
  }
  if (n == "escaped") return false;
  throw TypeErr{"No test named '" + n + "' found.", false, true};
}

// ------------------------------------------------------------------------ filters

Value apply_filter(const Env& env, const std::string& n, const Value& v, const Args& a) {
  bool strict = env.strict;
  auto S = [&](const Value& x) { return py_str(x, strict); };
  if (n == "trim") return Value::data(strip_chars(S(v), a.get(0, "chars"), true, true));
  if (n == "lower") return Value::data(lower_s(S(v)));
  if (n == "upper") return Value::data(upper_s(S(v)));
  if (n == "title") return Value::data(jinja_title(S(v)));
  if (n == "capitalize") return Value::data(capitalize_s(S(v)));
  if (n == "string") return Value::data(S(v));
  if (n == "safe" || n == "e" || n == "escape" || n == "forceescape") {
    if (n == "safe") return is_str(v) ? v : Value::data(S(v));
    return Value::data(markup_escape(S(v)));
  }
  if (n == "replace") {
    const Value* o = a.get(0, "old");
    const Value* w = a.get(1, "new");
    if (!o || !w) type_error("replace filter needs old and new");
    const Value* c = a.get(2, "count");
    int64_t cnt = (c && !(c->is_data() && c->j().is_null())) ? need_int(*c, "count") : -1;
    return Value::data(py_replace(S(v), S(*o), S(*w), cnt));
  }
  if (n == "regex_replace") {
    const Value* p = a.get(0, "pattern");
    const Value* r = a.get(1, "repl");
    if (!p || !r) type_error("regex_replace needs pattern and repl");
    const Value* c = a.get(2, "count");
    return Value::data(re_sub(S(*p), S(*r), S(v), c ? need_int(*c, "count") : 0));
  }
  if (n == "join") {
    const Value* d = a.get(0, "d");
    const Value* attr = a.get(1, "attribute");
    std::string sep = d ? S(*d) : std::string();
    std::string out;
    bool first = true;
    for (const auto& x : iterate(v, strict)) {
      if (!first) out += sep;
      first = false;
      out += S(attr ? attr_path(env, x, S(*attr)) : x);
    }
    return Value::data(out);
  }
  if (n == "length" || n == "count") return Value::data(py_len(v, strict));
  if (n == "first") {
    auto items = iterate(v, strict);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items[0];
  }
  if (n == "last") {
    auto items = iterate(v, strict);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
  }
  if (n == "list") return make_list(iterate(v, strict));
  if (n == "reverse") {
    if (is_str(v)) {
      std::u32string u = u32(sref(v));
      std::reverse(u.begin(), u.end());
      return Value::data(u8(u));
    }
    if (!(v.is_data() && (v.j().is_array() || v.j().is_object())) && !v.is_undefined() &&
        v.kind != Value::kLoop)
      throw TypeErr{"argument must be iterable", false, true};  // FilterArgumentError
    auto items = iterate(v, strict);
    std::reverse(items.begin(), items.end());
    return make_list(items);
  }
  if (n == "int") {
    if (v.is_undefined()) throw TypeErr{v.name, true};  // Undefined.__int__ raises
    const Value* d = a.get(0, "default");
    const Value* b = a.get(1, "base");
    int base = b ? static_cast<int>(need_int(*b, "base")) : 10;
    Value dflt = d ? *d : Value::data(static_cast<int64_t>(0));
    if (is_str(v)) {
      int64_t r;
      if (parse_py_int(sref(v), base, &r)) return Value::data(r);
      double f;
      if (parse_py_float(sref(v), &f) && std::isfinite(f)) {
        if (std::fabs(f) >= 9.2e18) type_error("int() result does not fit in 64 bits");
        return Value::data(static_cast<int64_t>(f));
      }
      return dflt;
    }
    if (v.is_data() && (v.j().is_number() || v.j().is_boolean())) {
      if (v.j().is_number_float()) {
        double f = v.j().get<double>();
        if (!std::isfinite(f)) return dflt;
        if (std::fabs(f) >= 9.2e18) type_error("int() result does not fit in 64 bits");
        return Value::data(static_cast<int64_t>(f));
      }
      return Value::data(as_int(v.j()));
    }
    return dflt;
  }
  if (n == "float") {
    if (v.is_undefined()) throw TypeErr{v.name, true};  // Undefined.__float__ raises
    const Value* d = a.get(0, "default");
    Value dflt = d ? *d : Value::data(0.0);
    if (is_str(v)) {
      double f;
      if (parse_py_float(sref(v), &f)) return Value::data(f);
      return dflt;
    }
    if (is_num(v)) return Value::data(as_double(v.j()));
    return dflt;
  }
  if (n == "abs") {
    if (!is_num(v)) type_error("bad operand type for abs(): '" + type_name(v) + "'");
    if (v.j().is_number_float()) return Value::data(std::fabs(v.j().get<double>()));
    return Value::data(std::llabs(as_int(v.j())));
  }
  if (n == "round") {
    const Value* p = a.get(0, "precision");
    const Value* m = a.get(1, "method");
    int64_t prec = p ? need_int(*p, "precision") : 0;
    std::string method = m ? S(*m) : "common";
    if (!is_num(v)) type_error("type " + type_name(v) + " doesn't define __round__ method");
    if (method == "common") {
      if (is_int_like(v.j())) return Value::data(as_int(v.j()));
      return Value::data(py_round(v.j().get<double>(), prec));
    }
    if (method != "ceil" && method != "floor") type_error("method must be common, ceil or floor");
    double f = std::pow(10.0, static_cast<double>(prec));
    double x = as_double(v.j()) * f;
    return Value::data((method == "ceil" ? std::ceil(x) : std::floor(x)) / f);
  }
  if (n == "default" || n == "d") {
    const Value* d = a.get(0, "default_value");
    const Value* b = a.get(1, "boolean");
    bool boolean = b && truthy(*b, strict);
    Value dflt = d ? *d : Value::data(std::string());
    if (v.is_undefined() || (boolean && !truthy(v, strict))) return dflt;
    return v;
  }
  if (n == "tojson") {
    if (v.is_undefined())
      type_error(std::string("Object of type ") + (strict ? "StrictUndefined" : "Undefined") +
                 " is not JSON serializable");
    Json j = to_json(v);
    if (contains_undefined(j))
      type_error(std::string("Object of type ") + (strict ? "StrictUndefined" : "Undefined") +
                 " is not JSON serializable");
    if (env.chat) {
      // transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
      py::JsonDumpOptions o;
      const Value* ea = a.get(0, "ensure_ascii");
      const Value* ind = a.get(1, "indent");
      const Value* sep = a.get(2, "separators");
      const Value* sk = a.get(3, "sort_keys");
      o.ensure_ascii = ea && truthy(*ea, strict);
      if (ind && ind->is_data() && !ind->j().is_null()) o.indent = need_int(*ind, "indent");
      if (sep && !(sep->is_data() && sep->j().is_null()))
        type_error("tojson: custom separators are not supported");
      o.sort_keys = sk && truthy(*sk, strict);
      return Value::data(py::json_dumps(j, o));
    }
    const Value* ind = a.get(0, "indent");
    int indent = (ind && ind->is_data() && !ind->j().is_null()) ? need_int(*ind, "indent") : -1;
    return Value::data(html_json(j, indent));
  }
  if (n == "indent") {
    // Jinja does `s += "\n"` then s.splitlines(): anything but a str fails.
    if (v.is_undefined()) throw TypeErr{v.name, true};
    if (!is_str(v))
      type_error(v.is_data() && v.j().is_array()
                     ? "'list' object has no attribute 'splitlines'"
                     : "unsupported operand type(s) for +=: '" + type_name(v) + "' and 'str'");
    const Value* f = a.get(1, "first");
    const Value* b = a.get(2, "blank");
    return Value::data(
        indent_filter(S(v), a.get(0, "width"), f && truthy(*f, strict), b && truthy(*b, strict)));
  }
  if (n == "center") {
    const Value* w = a.get(0, "width");
    Args aa;
    aa.pos.push_back(w ? *w : Value::data(static_cast<int64_t>(80)));
    return str_method(env, Value::data(S(v)), "center", aa);
  }
  if (n == "wordcount")
    return Value::data(static_cast<int64_t>(pyre::findall("\\w+", S(v)).size()));
  if (n == "items") {
    if (v.is_undefined()) return make_list({});
    if (!(v.is_data() && v.j().is_object())) type_error("items filter needs a mapping");
    return dict_items(v);
  }
  if (n == "dictsort") {
    if (!(v.is_data() && v.j().is_object())) type_error("dictsort filter needs a mapping");
    const Value* cs = a.get(0, "case_sensitive");
    const Value* by = a.get(1, "by");
    const Value* rev = a.get(2, "reverse");
    bool case_sensitive = cs && truthy(*cs, strict);
    int pos = (by && S(*by) == "value") ? 1 : 0;
    auto items = iterate(dict_items(v), strict);
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
      Value kx = Value::child(x, x.j()[pos]), ky = Value::child(y, y.j()[pos]);
      if (!case_sensitive && is_str(kx)) kx = Value::data(lower_s(sref(kx)));
      if (!case_sensitive && is_str(ky)) ky = Value::data(lower_s(sref(ky)));
      int c = py_cmp(kx, ky);
      return (rev && truthy(*rev, strict)) ? c > 0 : c < 0;
    });
    return make_list(items);
  }
  if (n == "sort") {
    const Value* rev = a.get(0, "reverse");
    const Value* cs = a.get(1, "case_sensitive");
    const Value* attr = a.get(2, "attribute");
    return sort_values(env, iterate(v, strict), rev && truthy(*rev, strict),
                       cs && truthy(*cs, strict), attr);
  }
  if (n == "unique") {
    const Value* cs = a.get(0, "case_sensitive");
    const Value* attr = a.get(1, "attribute");
    bool case_sensitive = cs && truthy(*cs, strict);
    std::vector<Value> out, seen;
    for (const auto& x : iterate(v, strict)) {
      Value k = attr ? attr_path(env, x, S(*attr)) : x;
      if (!case_sensitive && is_str(k)) k = Value::data(lower_s(sref(k)));
      bool dup = false;
      for (const auto& s : seen)
        if (py_eq(s, k)) dup = true;
      if (!dup) {
        seen.push_back(k);
        out.push_back(x);
      }
    }
    return make_list(out);
  }
  if (n == "min" || n == "max") {
    const Value* cs = a.get(0, "case_sensitive");
    const Value* attr = a.get(1, "attribute");
    auto items = iterate(v, strict);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    Value best = items[0];
    auto key = [&](const Value& x) {
      Value k = attr ? attr_path(env, x, S(*attr)) : x;
      if (!(cs && truthy(*cs, strict)) && is_str(k)) k = Value::data(lower_s(sref(k)));
      return k;
    };
    for (size_t i = 1; i < items.size(); ++i) {
      int c = py_cmp(key(items[i]), key(best));
      if (n == "min" ? c < 0 : c > 0) best = items[i];
    }
    return best;
  }
  if (n == "sum") {
    const Value* attr = a.get(0, "attribute");
    const Value* st = a.get(1, "start");
    Value acc = st ? *st : Value::data(static_cast<int64_t>(0));
    for (const auto& x : iterate(v, strict))
      acc = binary_op("+", acc, attr ? attr_path(env, x, S(*attr)) : x, strict);
    return acc;
  }
  if (n == "batch" || n == "slice") {
    // jinja2 sync_do_batch / sync_do_slice; their generators are given as lists (what `|list`
    // and `for` see of them).
    std::vector<Value> seq = iterate(v, strict);
    const Value* cnt = a.get(0, n == "batch" ? "linecount" : "slices");
    const Value* fill = a.get(1, "fill_with");
    if (!cnt)
      type_error(std::string(n == "batch" ? "do_batch" : "sync_do_slice") +
                 "() missing 1 required positional argument");
    int64_t k = need_int(*cnt, n == "batch" ? "linecount" : "slices");
    bool has_fill = fill && !(fill->is_data() && fill->j().is_null());
    std::vector<Value> out;
    if (n == "batch") {
      if (k <= 0) type_error("batch linecount must be positive");
      std::vector<Value> tmp;
      for (auto& x : seq) {
        if (static_cast<int64_t>(tmp.size()) == k) {
          out.push_back(make_list(tmp));
          tmp.clear();
        }
        tmp.push_back(x);
      }
      if (!tmp.empty()) {
        if (has_fill)
          while (static_cast<int64_t>(tmp.size()) < k) tmp.push_back(*fill);
        out.push_back(make_list(tmp));
      }
      return make_list(out);
    }
    if (k <= 0) type_error("integer division or modulo by zero");
    auto len = static_cast<int64_t>(seq.size());
    int64_t per = len / k, extra = len % k, offset = 0;
    for (int64_t s = 0; s < k; ++s) {
      int64_t start = offset + s * per;
      if (s < extra) ++offset;
      int64_t end = offset + (s + 1) * per;
      std::vector<Value> tmp(seq.begin() + start, seq.begin() + end);
      if (has_fill && s >= extra) tmp.push_back(*fill);
      out.push_back(make_list(tmp));
    }
    return make_list(out);
  }
  if (n == "map") {
    std::vector<Value> out;
    const Value* attr = nullptr;
    const Value* dflt = nullptr;
    for (const auto& [k, x] : a.kw) {
      if (k == "attribute") attr = &x;
      if (k == "default") dflt = &x;
    }
    auto items = iterate(v, strict);
    if (attr) {
      for (const auto& x : items) {
        Value r = attr_path(env, x, S(*attr));
        if (r.is_undefined() && dflt) r = *dflt;
        out.push_back(r);
      }
    } else {
      if (a.pos.empty()) return make_list(items);
      std::string fname = S(a.pos[0]);
      Args rest;
      rest.pos.assign(a.pos.begin() + 1, a.pos.end());
      rest.kw = a.kw;
      for (const auto& x : items) out.push_back(apply_filter(env, fname, x, rest));
    }
    return make_list(out);
  }
  if (n == "select" || n == "reject" || n == "selectattr" || n == "rejectattr") {
    bool attr_mode = n == "selectattr" || n == "rejectattr";
    bool want = n == "select" || n == "selectattr";
    size_t k = 0;
    std::string attr;
    if (attr_mode) {
      if (a.pos.empty()) type_error(n + " needs an attribute");
      attr = S(a.pos[k++]);
    }
    std::string test;
    bool has_test = k < a.pos.size();
    if (has_test) test = S(a.pos[k++]);
    Args rest;
    rest.pos.assign(a.pos.begin() + std::min(k, a.pos.size()), a.pos.end());
    rest.kw = a.kw;
    std::vector<Value> out;
    for (const auto& x : iterate(v, strict)) {
      Value subj = attr_mode ? attr_path(env, x, attr) : x;
      bool r = has_test ? apply_test(env, test, subj, rest) : truthy(subj, strict);
      if (r == want) out.push_back(x);
    }
    return make_list(out);
  }
  if (n == "format") {
    std::vector<Value> items = a.pos;
    return Value::data(py_format_percent(S(v), make_tuple(std::move(items)), strict));
  }
  if (n == "attr") {
    const Value* nm = a.get(0, "name");
    if (!nm) type_error("attr needs a name");
    return get_attr(env, v, S(*nm));
  }
  if (n == "pprint") return Value::data(py_repr(v));
  if (n == "truncate") {
    // jinja2 do_truncate, with the default policy truncate.leeway = 5; lengths in code points.
    std::vector<std::string> cps;
    unicode::for_each_codepoint(S(v),
                                [&](char32_t, std::string_view raw) { cps.emplace_back(raw); });
    const Value* l = a.get(0, "length");
    const Value* kw = a.get(1, "killwords");
    const Value* en = a.get(2, "end");
    const Value* lw = a.get(3, "leeway");
    int64_t length = l ? need_int(*l, "length") : 255;
    bool killwords = kw && truthy(*kw, strict);
    std::string end = en ? S(*en) : "...";
    int64_t end_len = 0;
    unicode::for_each_codepoint(end, [&](char32_t, std::string_view) { ++end_len; });
    int64_t leeway = lw && !(lw->is_data() && lw->j().is_null()) ? need_int(*lw, "leeway") : 5;
    if (length < end_len)
      type_error("expected length >= " + std::to_string(end_len) + ", got " +
                 std::to_string(length));
    if (leeway < 0) type_error("expected leeway >= 0, got " + std::to_string(leeway));
    auto n_cps = static_cast<int64_t>(cps.size());
    if (n_cps <= length + leeway) return Value::data(S(v));
    std::string head;
    for (int64_t i = 0; i < std::min(n_cps, length - end_len); ++i)
      head += cps[static_cast<size_t>(i)];
    if (!killwords) {
      size_t sp = head.rfind(' ');
      if (sp != std::string::npos) head.resize(sp);
    }
    return Value::data(head + end);
  }
  if (n == "filesizeformat") {
    // jinja2 do_filesizeformat: float(value), decimal (kB, MB) or binary (KiB, MiB) prefixes.
    double bytes;
    if (is_num(v))
      bytes = as_double(v.j());
    else if (!is_str(v) || !parse_py_float(sref(v), &bytes))
      type_error("could not convert " + type_name(v) + " to float");
    const Value* b = a.get(0, "binary");
    bool binary = b && truthy(*b, strict);
    double base = binary ? 1024 : 1000;
    static const char* const kDec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char* const kBin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    if (bytes == 1) return Value::data(std::string("1 Byte"));
    if (bytes < base) {
      if (!std::isfinite(bytes)) type_error("cannot convert float infinity to integer");
      return Value::data(std::to_string(static_cast<int64_t>(bytes)) + " Bytes");
    }
    double unit = 0;
    const char* prefix = "";
    for (int i = 0; i < 8; ++i) {
      unit = std::pow(base, i + 2);
      prefix = binary ? kBin[i] : kDec[i];
      if (bytes < unit) break;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit, prefix);
    return Value::data(std::string(buf));
  }
  if (n == "striptags") {
    // markupsafe Markup.striptags: drop comments and tags, collapse whitespace, unescape the
    // common entities (named ones beyond these are kept as written; docs/templates.md).
    std::string in = S(v), text;
    size_t pos = 0;
    while (true) {
      size_t start = in.find('<', pos);
      if (start == std::string::npos) break;
      size_t end;
      if (in.compare(start, 4, "<!--") == 0) {
        end = in.find("-->", start + 4);
        if (end == std::string::npos) break;
        end += 3;
      } else {
        end = in.find('>', start);
        if (end == std::string::npos) break;
        end += 1;
      }
      text += in.substr(pos, start - pos);
      pos = end;
    }
    text += in.substr(pos);
    std::string collapsed;
    bool pending = false;
    for (char c : text) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        pending = !collapsed.empty();
        continue;
      }
      if (pending) collapsed += ' ';
      pending = false;
      collapsed += c;
    }
    std::string out;
    for (size_t i = 0; i < collapsed.size(); ++i) {
      static const std::pair<const char*, const char*> kEnt[] = {{"&amp;", "&"},
                                                                 {"&lt;", "<"},
                                                                 {"&gt;", ">"},
                                                                 {"&quot;", "\""},
                                                                 {"&#39;", "'"},
                                                                 {"&#34;", "\""},
                                                                 {"&apos;", "'"},
                                                                 {"&nbsp;", "\xc2\xa0"},
                                                                 {"&raquo;", "\xc2\xbb"},
                                                                 {"&laquo;", "\xc2\xab"},
                                                                 {"&copy;", "\xc2\xa9"},
                                                                 {"&reg;", "\xc2\xae"},
                                                                 {"&hellip;", "\xe2\x80\xa6"},
                                                                 {"&mdash;", "\xe2\x80\x94"},
                                                                 {"&ndash;", "\xe2\x80\x93"}};
      bool done = false;
      for (const auto& [e, r] : kEnt)
        if (collapsed.compare(i, std::strlen(e), e) == 0) {
          out += r;
          i += std::strlen(e) - 1;
          done = true;
          break;
        }
      if (!done) out += collapsed[i];
    }
    return Value::data(out);
  }
  if (auto r = apply_text_filter(env, n, v, a)) return *r;
  throw TypeErr{"No filter named '" + n + "' found.", false, true};
}

}  // namespace lmeval::tmpl

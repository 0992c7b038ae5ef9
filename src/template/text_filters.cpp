// jinja2's filters wordwrap, urlize, xmlattr, urlencode, groupby and random.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "template/engine.hpp"

namespace lmeval::tmpl {

// A named namespace: a unity build puts this file in one translation unit with builtins.cpp, whose
// anonymous-namespace helpers share these names.
namespace text_filters {
namespace {

[[noreturn]] void type_error(const std::string& m) { throw TypeErr{m}; }

bool is_none(const Value* v) { return !v || (v->is_data() && v->j().is_null()); }

int64_t need_int(const Value& v, const char* what) {
  if (!v.is_data() || !is_int_like(v.j()))
    type_error(std::string("'") + type_name(v) + "' object cannot be interpreted as an integer (" +
               what + ")");
  return as_int(v.j());
}

// A dict key as the Python value it stands for (typed keys: 1, True, None, ...).
Value key_value(const std::string& key) {
  if (auto tv = py::typed_key_value(key)) return Value::data(*tv);
  return Value::data(key);
}

// ------------------------------------------------------------------ wordwrap

// CPython textwrap.TextWrapper's chunk patterns (Lib/textwrap.py, wordsep_re and
// wordsep_simple_re): its whitespace is the ASCII set only, words may break after a hyphen
// between letters and around em-dashes ("--").
constexpr const char* kWordSep =
    R"(([\t\n\x0b\x0c\r ]+)"
    R"(|(?<=[\w!"'&.,?])-{2,}(?=\w))"
    R"(|[^\t\n\x0b\x0c\r ]+?(?:-(?:(?<=[^\d\W]{2}-)|(?<=[^\d\W]-[^\d\W]-))(?=[^\d\W]-?[^\d\W]))"
    R"(|(?=[\t\n\x0b\x0c\r ]|\Z))"
    R"(|(?<=[\w!"'&.,?])(?=-{2,}\w))))";
constexpr const char* kWordSepSimple = R"(([\t\n\x0b\x0c\r ]+))";

struct Wrapper {
  int64_t width;
  bool break_long_words;
  bool split_on_hyphens;  // TextWrapper._split: `break_on_hyphens is True`
  bool long_on_hyphens;   // TextWrapper._handle_long_word: truthiness

  static bool blank(const std::u32string& c) {
    std::string s = u8(c);
    return unicode::py_strip(s).empty();
  }

  std::vector<std::u32string> split(const std::string& text) const {
    std::vector<std::u32string> chunks;
    for (const auto& part : pyre::split(split_on_hyphens ? kWordSep : kWordSepSimple, text))
      if (part && !part->empty()) chunks.push_back(u32(*part));
    return chunks;
  }

  // TextWrapper._handle_long_word.
  void long_word(std::vector<std::u32string>& rev, std::vector<std::u32string>& line,
                 int64_t cur_len) const {
    int64_t space_left = width < 1 ? 1 : width - cur_len;
    if (break_long_words) {
      auto end = static_cast<size_t>(space_left);
      std::u32string chunk = rev.back();
      if (long_on_hyphens && static_cast<int64_t>(chunk.size()) > space_left) {
        size_t h = chunk.substr(0, static_cast<size_t>(space_left)).rfind(U'-');
        if (h != std::u32string::npos && h > 0 &&
            std::any_of(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(h),
                        [](char32_t c) { return c != U'-'; }))
          end = h + 1;
      }
      line.push_back(chunk.substr(0, end));
      rev.back() = end < chunk.size() ? chunk.substr(end) : std::u32string();
    } else if (line.empty()) {
      line.push_back(rev.back());
      rev.pop_back();
    }
  }

  // TextWrapper.wrap with no indents, drop_whitespace and no max_lines.
  std::vector<std::string> wrap(const std::string& text) const {
    std::vector<std::u32string> rev = split(text);
    std::reverse(rev.begin(), rev.end());
    std::vector<std::string> lines;
    while (!rev.empty()) {
      std::vector<std::u32string> line;
      int64_t cur_len = 0;
      if (blank(rev.back()) && !lines.empty()) rev.pop_back();
      while (!rev.empty()) {
        auto l = static_cast<int64_t>(rev.back().size());
        if (cur_len + l > width) break;
        line.push_back(rev.back());
        rev.pop_back();
        cur_len += l;
      }
      if (!rev.empty() && static_cast<int64_t>(rev.back().size()) > width) {
        long_word(rev, line, cur_len);
        cur_len = 0;
        for (const auto& c : line) cur_len += static_cast<int64_t>(c.size());
      }
      if (!line.empty() && blank(line.back())) {
        cur_len -= static_cast<int64_t>(line.back().size());
        line.pop_back();
      }
      if (!line.empty()) {
        std::u32string joined;
        for (const auto& c : line) joined += c;
        lines.push_back(u8(joined));
      }
    }
    return lines;
  }
};

// jinja2 do_wordwrap: each line of the text (str.splitlines) wrapped on its own by
// textwrap.wrap(expand_tabs=False, replace_whitespace=False, ...), joined by wrapstring.
Value wordwrap(const Env& env, const Value& v, const Args& a) {
  if (!is_str(v)) {
    if (v.is_undefined()) throw TypeErr{v.name, true};
    type_error("'" + type_name(v) + "' object has no attribute 'splitlines'");
  }
  const Value* w = a.get(0, "width");
  const Value* blw = a.get(1, "break_long_words");
  const Value* ws = a.get(2, "wrapstring");
  const Value* boh = a.get(3, "break_on_hyphens");
  Wrapper wr{};
  wr.width = w ? need_int(*w, "width") : 79;
  wr.break_long_words = !blw || truthy(*blw, env.strict);
  wr.split_on_hyphens = !boh || (boh->is_data() && boh->j().is_boolean() && boh->j().get<bool>());
  wr.long_on_hyphens = !boh || truthy(*boh, env.strict);
  std::string sep = "\n";  // Environment.newline_sequence
  if (!is_none(ws)) {
    if (!is_str(*ws)) type_error("sequence item 0: expected str instance, " + type_name(*ws));
    sep = ws->j().get<std::string>();
  }
  std::vector<std::string> lines = py_splitlines(v.j().get<std::string>(), false);
  if (wr.width <= 0 && !lines.empty())
    type_error("invalid width " + std::to_string(wr.width) + " (must be > 0)");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += sep;
    std::vector<std::string> wrapped = wr.wrap(lines[i]);
    for (size_t k = 0; k < wrapped.size(); ++k) {
      if (k) out += sep;
      out += wrapped[k];
    }
  }
  return Value::data(out);
}

// ------------------------------------------------------------------ urlize

// jinja2.utils._http_re and _email_re.
constexpr const char* kHttp =
    R"(^((https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59}))"
    R"(|([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil))"
    R"(|(https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}\]))))"
    R"((?::[\d]{1,5})?(?:[/?#]\S*)?$)";
constexpr const char* kEmail = R"(^\S+@\w[\w.-]*\.\w+$)";

size_t count_of(const std::string& s, const std::string& sub) {
  size_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
  return n;
}

bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// jinja2.utils.urlize over the escaped text.
std::string urlize_text(const std::string& escaped, const std::optional<int64_t>& trim,
                        const std::string& rel_attr, const std::string& target_attr,
                        const std::vector<std::string>& extra_schemes) {
  auto trim_url = [&](const std::string& x) {
    if (!trim || static_cast<int64_t>(unicode::length(x)) <= *trim) return x;
    std::u32string u = u32(x);
    auto n = static_cast<int64_t>(u.size());
    int64_t keep = *trim >= 0 ? *trim : std::max<int64_t>(n + *trim, 0);  // x[:limit]
    return u8(u.substr(0, static_cast<size_t>(keep))) + "...";
  };
  std::string out;
  for (const auto& part : pyre::split(R"((\s+))", escaped)) {
    std::string head, middle = part.value_or(""), tail;
    if (auto m = pyre::search(R"(^([(<]|&lt;)+)", middle)) {
      head = std::string(m->group().value_or(""));
      middle = middle.substr(m->end());
    }
    for (const char* e : {")", ">", ".", ",", "\n", "&gt;"}) {
      if (middle.size() < std::strlen(e) ||
          middle.compare(middle.size() - std::strlen(e), std::string::npos, e) != 0)
        continue;
      if (auto m = pyre::search(R"(([)>.,\n]|&gt;)+$)", middle)) {
        tail = middle.substr(m->start());
        middle = middle.substr(0, m->start());
      }
      break;
    }
    // Balance parentheses by taking closing ones back from the tail.
    for (const auto& [open, close] :
         {std::pair<std::string, std::string>{"(", ")"}, {"<", ">"}, {"&lt;", "&gt;"}}) {
      size_t opens = count_of(middle, open);
      if (opens <= count_of(middle, close)) continue;
      size_t moves = std::min(opens, count_of(tail, close));
      for (size_t k = 0; k < moves; ++k) {
        size_t end = tail.find(close) + close.size();
        middle += tail.substr(0, end);
        tail = tail.substr(end);
      }
    }
    if (PyRegex::compile(kHttp, PyRegex::IGNORECASE)->match(middle)) {
      std::string href =
          starts(middle, "https://") || starts(middle, "http://") ? middle : "https://" + middle;
      middle =
          "<a href=\"" + href + "\"" + rel_attr + target_attr + ">" + trim_url(middle) + "</a>";
    } else if (starts(middle, "mailto:") && pyre::search(kEmail, middle.substr(7))) {
      middle = "<a href=\"" + middle + "\">" + middle.substr(7) + "</a>";
    } else if (middle.find('@') != std::string::npos && !starts(middle, "www.") &&
               !starts(middle, "@") && middle.find(':') == std::string::npos &&
               pyre::search(kEmail, middle)) {
      middle = "<a href=\"mailto:" + middle + "\">" + middle + "</a>";
    } else {
      for (const auto& scheme : extra_schemes)
        if (middle != scheme && starts(middle, scheme))
          middle = "<a href=\"" + middle + "\"" + rel_attr + target_attr + ">" + middle + "</a>";
    }
    out += head + middle + tail;
  }
  return out;
}

// jinja2 do_urlize with the default policies (urlize.rel "noopener", no target, no extra
// schemes) and autoescape off, as the reference's environment has them.
Value urlize(const Env& env, const Value& v, const Args& a) {
  bool strict = env.strict;
  const Value* lim = a.get(0, "trim_url_limit");
  const Value* nofollow = a.get(1, "nofollow");
  const Value* target = a.get(2, "target");
  const Value* rel = a.get(3, "rel");
  const Value* schemes = a.get(4, "extra_schemes");
  std::set<std::string> rel_parts;
  if (rel && truthy(*rel, strict)) {
    std::string r = py_str(*rel, strict);
    for (const auto& w : pyre::findall(R"(\S+)", r)) rel_parts.insert(w.get<std::string>());
  }
  if (nofollow && truthy(*nofollow, strict)) rel_parts.insert("nofollow");
  rel_parts.insert("noopener");  // policies["urlize.rel"]
  std::string rel_s;
  for (const auto& p : rel_parts) rel_s += (rel_s.empty() ? "" : " ") + p;
  std::string rel_attr = " rel=\"" + markup_escape(rel_s) + "\"";
  std::string target_attr;
  if (!is_none(target) && truthy(*target, strict))
    target_attr = " target=\"" + markup_escape(py_str(*target, strict)) + "\"";
  std::vector<std::string> extra;
  if (!is_none(schemes)) {
    for (const auto& s : iterate(*schemes, strict)) {
      std::string scheme = py_str(s, strict);
      if (!is_str(s) || !PyRegex::compile(R"(^([\w.+-]{2,}:(/){0,2})$)")->fullmatch(scheme))
        throw TypeErr{py_repr(s) + " is not a valid URI scheme prefix.", false, true};
      extra.push_back(scheme);
    }
  }
  std::optional<int64_t> trim;
  if (!is_none(lim)) trim = need_int(*lim, "trim_url_limit");
  return Value::data(
      urlize_text(markup_escape(py_str(v, strict)), trim, rel_attr, target_attr, extra));
}

// ------------------------------------------------------------------ xmlattr, urlencode

// jinja2 do_xmlattr: key="value" pairs of a dict, None and Undefined values left out.
Value xmlattr(const Env& env, const Value& v, const Args& a) {
  bool strict = env.strict;
  if (v.is_undefined()) throw TypeErr{v.name, true};
  if (!v.is_data() || !v.j().is_object())
    type_error("'" + type_name(v) + "' object has no attribute 'items'");
  const Value* autospace = a.get(0, "autospace");
  std::string rv;
  for (auto it = v.j().begin(); it != v.j().end(); ++it) {
    Value val = Value::child(v, it.value());
    if (val.is_undefined() || val.j().is_null()) continue;
    Value key = key_value(it.key());
    if (!is_str(key))
      type_error("expected string or bytes-like object, got '" + type_name(key) + "'");
    const std::string& k = key.j().get_ref<const std::string&>();
    if (k.find_first_of(" \t\n\r\f\v/>=") != std::string::npos)
      type_error("Invalid character in attribute name: " + py_repr(key));
    if (!rv.empty()) rv += ' ';
    rv += markup_escape(k) + "=\"" + markup_escape(py_str(val, strict)) + "\"";
  }
  if (!rv.empty() && (!autospace || truthy(*autospace, strict))) rv = " " + rv;
  return Value::data(rv);
}

// jinja2.utils.url_quote: urllib.parse.quote_from_bytes of str(obj) in UTF-8, "/" safe unless
// for a query string, where spaces become "+".
std::string url_quote(const Value& obj, bool strict, bool for_qs) {
  std::string s = py_str(obj, strict), out;
  for (unsigned char c : s) {
    bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-' || c == '~' || (!for_qs && c == '/');
    if (safe) {
      out += static_cast<char>(c);
    } else if (for_qs && c == ' ') {
      out += '+';
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

Value urlencode(const Env& env, const Value& v) {
  bool strict = env.strict;
  bool iterable = v.is_undefined() || v.kind == Value::kLoop ||
                  (v.is_data() && (v.j().is_array() || v.j().is_object()));
  if (is_str(v) || !iterable) return Value::data(url_quote(v, strict, false));
  std::vector<Value> items;
  if (v.is_data() && v.j().is_object())
    for (auto it = v.j().begin(); it != v.j().end(); ++it)
      items.push_back(make_tuple({key_value(it.key()), Value::child(v, it.value())}));
  else
    items = iterate(v, strict);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    std::vector<Value> kv = iterate(items[i], strict);
    if (kv.size() < 2)
      type_error("not enough values to unpack (expected 2, got " + std::to_string(kv.size()) + ")");
    if (kv.size() > 2) type_error("too many values to unpack (expected 2)");
    if (i) out += '&';
    out += url_quote(kv[0], strict, true) + "=" + url_quote(kv[1], strict, true);
  }
  return Value::data(out);
}

// ------------------------------------------------------------------ groupby, random

// jinja2 make_attrgetter: dotted parts (digits as integers), `default` for an Undefined part.
Value attribute_of(const Env& env, const Value& item, const Value& attribute,
                   const Value* fallback) {
  std::vector<Value> parts;
  if (is_str(attribute)) {
    const std::string& path = attribute.j().get_ref<const std::string&>();
    size_t i = 0;
    while (true) {
      size_t d = path.find('.', i);
      std::string part = path.substr(i, d == std::string::npos ? std::string::npos : d - i);
      bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
      parts.push_back(digits ? Value::data(static_cast<int64_t>(std::stoll(part)))
                             : Value::data(part));
      if (d == std::string::npos) break;
      i = d + 1;
    }
  } else {
    parts.push_back(attribute);
  }
  Value cur = item;
  for (const auto& p : parts) {
    cur = get_item(env, cur, p);
    if (!is_none(fallback) && cur.is_undefined()) cur = *fallback;
  }
  return cur;
}

// jinja2 sync_do_groupby: sorted by the attribute (lowercased strings unless case_sensitive),
// grouped by equal keys, each group a (grouper, list) namedtuple; without case_sensitive the
// grouper is the first item's own value.
Value groupby(const Env& env, const Value& v, const Args& a) {
  bool strict = env.strict;
  const Value* attribute = a.get(0, "attribute");
  if (!attribute)
    type_error("sync_do_groupby() missing 1 required positional argument: 'attribute'");
  const Value* fallback = a.get(1, "default");
  const Value* cs = a.get(2, "case_sensitive");
  bool case_sensitive = cs && truthy(*cs, strict);
  auto key = [&](const Value& x) {
    Value k = attribute_of(env, x, *attribute, fallback);
    if (!case_sensitive && is_str(k)) k = Value::data(unicode::py_lower(k.j().get<std::string>()));
    return k;
  };
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& x : iterate(v, strict)) keyed.emplace_back(key(x), x);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& x, const auto& y) { return py_cmp(x.first, y.first) < 0; });
  std::vector<Value> groups;
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i + 1;
    while (j < keyed.size() && py_eq(keyed[j].first, keyed[i].first)) ++j;
    std::vector<Value> members;
    for (size_t k = i; k < j; ++k) members.push_back(keyed[k].second);
    Value grouper =
        case_sensitive ? keyed[i].first : attribute_of(env, keyed[i].second, *attribute, fallback);
    Value g = make_tuple({grouper, make_list(members)});
    g.group = true;
    groups.push_back(g);
    i = j;
  }
  return make_list(groups);
}

// jinja2 do_random: random.choice(seq) on the rendering's generator; Undefined when empty.
Value random_choice(const Env& env, const Value& v) {
  int64_t n = py_len(v, env.strict);
  if (n == 0) return Value::undefined("No random item, sequence was empty.");
  auto i = static_cast<int64_t>(env.randbelow(static_cast<uint64_t>(n)));
  if (v.is_data() && v.j().is_object()) {
    // seq[i] of a dict: the key i, else a KeyError.
    Value r = get_item(env, v, Value::data(i));
    if (r.is_undefined()) type_error("KeyError: " + std::to_string(i));
    return r;
  }
  std::vector<Value> items = iterate(v, env.strict);
  return items[static_cast<size_t>(i)];
}

}  // namespace
}  // namespace text_filters

std::optional<Value> apply_text_filter(const Env& env, const std::string& n, const Value& v,
                                       const Args& a) {
  using namespace text_filters;  // NOLINT(google-build-using-namespace)
  if (n == "wordwrap") return wordwrap(env, v, a);
  if (n == "urlize") return urlize(env, v, a);
  if (n == "xmlattr") return xmlattr(env, v, a);
  if (n == "urlencode") return urlencode(env, v);
  if (n == "groupby") return groupby(env, v, a);
  if (n == "random") return random_choice(env, v);
  return std::nullopt;
}

}  // namespace lmeval::tmpl

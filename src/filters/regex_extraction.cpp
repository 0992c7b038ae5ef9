// Answer extraction shared by the regex filters (see the header).
#include "filters/regex_extraction.hpp"

#include "lmeval/core/unicode.hpp"

namespace lmeval::filters {

std::shared_ptr<const PyRegex> compile_kwarg(const Kwargs& args, const std::string& key,
                                             const std::string& pattern) {
  try {
    return PyRegex::compile(pattern);
  } catch (const UserError& e) {
    args.fail(key, e.message());
  }
}

std::shared_ptr<const PyRegex> compile_runtime(const std::string& filter,
                                               const std::string& pattern) {
  try {
    return PyRegex::compile(pattern);
  } catch (const UserError& e) {
    throw RuntimeError("filter '" + filter + "': " + e.message() +
                       " (the reference raises re.error)");
  }
}

std::optional<Json> select_match(const PyRegex& re, std::string_view text, long long group_select,
                                 const std::string& filter) {
  std::vector<PyMatch> matches = re.finditer(text);
  if (matches.empty()) return std::nullopt;
  long long n = static_cast<long long>(matches.size());
  long long i = group_select < 0 ? n + group_select : group_select;
  if (i < 0 || i >= n)
    throw RuntimeError("filter '" + filter + "': group_select " + std::to_string(group_select) +
                       " is out of range for the " + std::to_string(n) + " match(es) of '" +
                       re.pattern() +
                       "' (the reference raises IndexError: list index out of range)");
  const PyMatch& m = matches[static_cast<size_t>(i)];
  if (re.groups() == 0) return Json(std::string(m.group_or_empty(0)));
  if (re.groups() == 1) return Json(std::string(m.group_or_empty(1)));
  Json tuple = Json::array();
  for (size_t g = 1; g <= re.groups(); ++g) tuple.push_back(std::string(m.group_or_empty(g)));
  return tuple;
}

void assign(OrderedMap& map, const std::string& key, std::string value) {
  for (auto& [k, v] : map)
    if (k == key) {
      v = std::move(value);
      return;
    }
  map.emplace_back(key, std::move(value));
}

FilterIgnores::FilterIgnores(const Kwargs& args)
    : ignore_case_(args.boolean("ignore_case", false)),
      ignore_punctuation_(args.boolean("ignore_punctuation", false)) {
  if (!args.has("regexes_to_ignore") || args.get("regexes_to_ignore").is_null()) return;
  const Json& list = args.get("regexes_to_ignore");
  if (!list.is_array())
    args.fail("regexes_to_ignore", "regexes_to_ignore must be a list of regexes");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string key = "regexes_to_ignore[" + std::to_string(i) + "]";
    if (!list[i].is_string()) args.fail(key, "a regex to ignore must be a string");
    regexes_.push_back(compile_kwarg(args, key, list[i].get<std::string>()));
  }
}

std::string FilterIgnores::apply(std::string st) const {
  for (const auto& r : regexes_) st = r->sub("", st);
  if (ignore_case_) st = unicode::py_lower(st);
  if (ignore_punctuation_) {
    std::string out;
    unicode::for_each_codepoint(st, [&](char32_t c, std::string_view raw) {
      if (!unicode::is_punctuation(c)) out += raw;
    });
    st = std::move(out);
  }
  return st;
}

Json find_match(const PyRegex& re, std::string_view text, long long group_select,
                const std::string& filter, const OrderedMap& convert, EmptyGroups empty_groups) {
  std::optional<Json> m = select_match(re, text, group_select, filter);
  if (!m) return Json::array();
  std::string match;
  if (m->is_array()) {
    bool found = false;
    for (const Json& g : *m)
      if (!g.get_ref<const std::string&>().empty()) {
        match = g.get<std::string>();
        found = true;
        break;
      }
    if (!found) {
      if (empty_groups == EmptyGroups::kRaise)
        throw RuntimeError("filter '" + filter + "': a match of '" + re.pattern() +
                           "' has only empty groups (the reference raises IndexError)");
      return "";
    }
  } else {
    match = m->get<std::string>();
  }
  std::string s(unicode::py_strip(match));
  if (!s.empty())
    for (const auto& [k, v] : convert)
      if (k == s) return v;
  return s;
}

bool truthy(const Json& v) {
  // (nlohmann's empty() is false for every string, so strings are checked by content)
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  return v.get<double>() != 0;
}

}  // namespace lmeval::filters

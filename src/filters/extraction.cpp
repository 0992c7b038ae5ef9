// Extraction filters (lm_eval/filters/extraction.py): regex, regex_pos, remove_whitespace,
// multi_choice_regex.
#include <algorithm>

#include "filters/filter_util.hpp"
#include "filters/regex_extraction.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::filters {

namespace {

constexpr const char* kDefaultPattern = R"(#### (\-?[0-9\.\,]+))";

// RegexFilter.
class Regex : public Filter {
 public:
  Regex(std::shared_ptr<const PyRegex> re, long long group_select, Json fallback)
      : re_(std::move(re)), group_select_(group_select), fallback_(std::move(fallback)) {}

  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, "regex")) {
        std::string_view text = resp.is_string()
                                    ? std::string_view(resp.get_ref<const std::string&>())
                                    : std::string_view();
        std::optional<Json> m = select_match(*re_, text, group_select_, "regex");
        if (!m) {
          filtered.push_back(fallback_);
          continue;
        }
        Json match = std::move(*m);
        if (match.is_array()) {  // several groups: a tuple
          Json first = fallback_;
          for (const Json& g : match) {
            if (!g.get_ref<const std::string&>().empty()) {
              first = g;
              break;
            }
          }
          match = std::move(first);
        }
        filtered.push_back(std::string(unicode::py_strip(py_str(match, "strip", "regex"))));
      }
      inst = std::move(filtered);
    }
    return resps;
  }

 private:
  std::shared_ptr<const PyRegex> re_;
  long long group_select_;
  Json fallback_;
};

// POSFilter: the part-of-speech tags of "[('tok', 'TAG'), ...]" texts. Like the reference, its
// regex_pattern and group_select are accepted but unused.
class RegexPos : public Filter {
 public:
  explicit RegexPos(Json fallback) : fallback_(std::move(fallback)) {}

  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    static const auto tagged = PyRegex::compile(R"(\('([^']*)', '([^']*)'\))");
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, "regex_pos")) {
        Json result = resp.is_string() ? tagged->findall(resp.get_ref<const std::string&>()) : resp;
        Json tags = Json::array();
        for (const Json& pair : py_iter(result, "regex_pos")) {
          PyItems items = py_iter(pair, "regex_pos");
          if (items.size() != 2)
            throw RuntimeError(
                "filter 'regex_pos': expected (token, tag) pairs (the reference "
                "raises ValueError)");
          tags.push_back(items[1]);
        }
        filtered.push_back(tags.empty() ? fallback_ : tags);
      }
      inst = std::move(filtered);
    }
    return resps;
  }

 private:
  Json fallback_;
};

// WhitespaceFilter: str.strip() of every response.
class RemoveWhitespace : public Filter {
 public:
  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    for (Json& inst : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(inst, "remove_whitespace"))
        filtered.push_back(
            std::string(unicode::py_strip(py_str(resp, "strip", "remove_whitespace"))));
      inst = std::move(filtered);
    }
    return resps;
  }
};

// MultiChoiceRegexFilter (as released in PyPI lm-eval 0.4.13, whose choice fallback regex tries
// longer choices first).
class MultiChoiceRegex : public Filter {
 public:
  MultiChoiceRegex(std::shared_ptr<const PyRegex> re, long long group_select, Json fallback,
                   FilterIgnores ignores)
      : re_(std::move(re)),
        group_select_(group_select),
        fallback_(std::move(fallback)),
        ignores_(std::move(ignores)) {}

  std::vector<Json> apply(std::vector<Json> resps,
                          const std::vector<const Json*>& docs) const override {
    if (resps.size() != docs.size())
      throw RuntimeError(
          "filter 'multi_choice_regex': responses and docs differ in length (the reference "
          "raises ValueError from zip(strict=True))");
    for (size_t d = 0; d < resps.size(); ++d) {
      const Json* doc = docs[d];
      if (!doc || !doc->is_object() || !doc->contains("choices"))
        throw UserError(
            "filter 'multi_choice_regex' needs a 'choices' field in every document (the "
            "reference raises KeyError: 'choices')");
      std::vector<std::string> alternatives;
      OrderedMap choice_to_alpha, letter_to_target;
      std::string letters;
      char32_t next = 'A';
      for (const Json& c : py_iter((*doc)["choices"], "multi_choice_regex")) {
        std::string m =
            ignores(Json(std::string(unicode::py_strip(py_str(c, "strip", "multi_choice_regex")))));
        alternatives.push_back(py_re_escape(m));
        std::string letter;
        unicode::append_utf8(letter, next);
        assign(choice_to_alpha, m, "(" + letter + ")");
        assign(letter_to_target, letter, "(" + letter + ")");
        letters += (letters.empty() ? "" : "|") + letter;
        ++next;
      }
      std::stable_sort(alternatives.begin(), alternatives.end(),
                       [](const std::string& a, const std::string& b) {
                         return unicode::length(a) > unicode::length(b);
                       });
      std::string fallback_pattern;
      for (const auto& a : alternatives)
        fallback_pattern += (fallback_pattern.empty() ? "" : "|") + a;
      auto fallback_re = compile_runtime("multi_choice_regex", fallback_pattern);
      auto letter_re = compile_runtime("multi_choice_regex", ":[\\s]*(" + letters + ")");

      Json filtered = Json::array();
      for (const Json& resp : py_iter(resps[d], "multi_choice_regex")) {
        Json match = find(*re_, text_of(resp), {});
        if (!truthy(match)) {
          match = find(*fallback_re, ignores(resp), choice_to_alpha);
          if (!truthy(match)) match = find(*letter_re, text_of(resp), letter_to_target);
        }
        if (!truthy(match)) match = fallback_;
        filtered.push_back(std::move(match));
      }
      resps[d] = std::move(filtered);
    }
    return resps;
  }

 private:
  // The reference's find_match turns a non-str response into "".
  static std::string_view text_of(const Json& resp) {
    return resp.is_string() ? std::string_view(resp.get_ref<const std::string&>())
                            : std::string_view();
  }

  // filter_ignores: non-strings pass through untouched unless an operation needs a str.
  std::string ignores(const Json& v) const {
    if (!v.is_string()) {
      if (ignores_.touches())
        throw RuntimeError(
            "filter 'multi_choice_regex': cannot apply regexes_to_ignore/"
            "ignore_case/ignore_punctuation to a '" +
            py_type(v) + "' response (the reference raises TypeError)");
      return "";  // find_match turns a non-str into ""
    }
    return ignores_.apply(v.get<std::string>());
  }

  Json find(const PyRegex& re, std::string_view text, const OrderedMap& convert) const {
    return find_match(re, text, group_select_, "multi_choice_regex", convert,
                      EmptyGroups::kEmptyString);
  }

  std::shared_ptr<const PyRegex> re_;
  long long group_select_;
  Json fallback_;
  FilterIgnores ignores_;
};

}  // namespace

void register_extraction_filters(FilterRegistry& r) {
  r.add("regex", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("regex", kwargs, where, {"regex_pattern", "group_select", "fallback"});
    std::string pattern = args.string("regex_pattern", kDefaultPattern);
    return std::make_unique<Regex>(compile_kwarg(args, "regex_pattern", pattern),
                                   args.integer("group_select", 0),
                                   args.value("fallback", "[invalid]"));
  });
  r.add("regex_pos", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("regex_pos", kwargs, where, {"regex_pattern", "group_select", "fallback"});
    // The reference compiles the (otherwise unused) pattern, so a bad one is still an error.
    compile_kwarg(args, "regex_pattern", args.string("regex_pattern", R"(\['(.*?)'\])"));
    Json fallback = args.value("fallback", nullptr);
    if (fallback.is_null()) fallback = Json::array({"invalid"});
    return std::make_unique<RegexPos>(std::move(fallback));
  });
  r.add("remove_whitespace", [](const Json& kwargs, const SourceLocation& where) {
    // WhitespaceFilter has no __init__ of its own: Filter.__init__ ignores any kwargs.
    Kwargs args("remove_whitespace", kwargs, where, {}, /*extra_allowed=*/true);
    return std::make_unique<RemoveWhitespace>();
  });
  r.add("multi_choice_regex", [](const Json& kwargs, const SourceLocation& where) {
    Kwargs args("multi_choice_regex", kwargs, where,
                {"regex_pattern", "group_select", "fallback", "ignore_case", "ignore_punctuation",
                 "regexes_to_ignore"});
    std::string pattern = args.string("regex_pattern", kDefaultPattern);
    FilterIgnores ignores(args);
    return std::make_unique<MultiChoiceRegex>(
        compile_kwarg(args, "regex_pattern", pattern), args.integer("group_select", 0),
        args.value("fallback", "[invalid]"), std::move(ignores));
  });
}

}  // namespace lmeval::filters

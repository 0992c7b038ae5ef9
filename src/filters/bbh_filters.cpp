// BBH (zero-shot and CoT zero-shot) filter classes from lm_eval/tasks/bbh/{zeroshot,cot_zeroshot}/
// utils.py, registered as "<folder>/utils.<Class>" for `function: !function utils.<Class>`.
#include <algorithm>

#include "filters/filter_util.hpp"
#include "filters/regex_extraction.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::filters {

namespace {

// ExtendedRegexFilter: RegexFilter plus the ignore options, with the bbh find_match (a match
// whose groups are all empty raises).
class ExtendedRegex : public Filter {
 public:
  ExtendedRegex(const char* name, const Kwargs& args, const std::string& pattern)
      : name_(name),
        re_(compile_kwarg(args, "regex_pattern", pattern)),
        group_select_(args.integer("group_select", 0)),
        fallback_(args.value("fallback", "[invalid]")),
        ignores_(args) {}

 protected:
  const std::string& require_str(const Json& v) const {
    if (!v.is_string())
      throw RuntimeError("filter '" + name_ + "': expected string responses, got '" + py_type(v) +
                         "' (the reference raises TypeError)");
    return v.get_ref<const std::string&>();
  }

  std::string ignores(const Json& v) const { return ignores_.apply(require_str(v)); }

  Json find(const PyRegex& re, const std::string& resp, const OrderedMap& convert = {}) const {
    return find_match(re, resp, group_select_, name_, convert, EmptyGroups::kRaise);
  }

  std::string name_;
  std::shared_ptr<const PyRegex> re_;
  long long group_select_;
  Json fallback_;
  FilterIgnores ignores_;
};

// MapRegexFilter: the first regex of regex_pattern_to_value (in YAML order) that matches the
// extracted text gives the value.
class MapRegex : public ExtendedRegex {
 public:
  MapRegex(const Kwargs& args, const std::string& joined,
           std::vector<std::pair<std::shared_ptr<const PyRegex>, Json>> map)
      : ExtendedRegex("MapRegexFilter", args, joined), map_(std::move(map)) {}

  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    for (Json& r : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(r, "MapRegexFilter")) {
        Json whole = find(*re_, ignores(resp));
        Json match;
        bool matched = false;
        if (truthy(whole)) {
          for (const auto& [regex, value] : map_) {
            Json m = find(*regex, ignores(whole));
            if (truthy(m)) {
              match = value;
              matched = true;
              break;
            }
          }
        }
        filtered.push_back(matched ? match : fallback_);
      }
      r = std::move(filtered);
    }
    return resps;
  }

 private:
  std::vector<std::pair<std::shared_ptr<const PyRegex>, Json>> map_;
};

// MultiChoiceRegexFilter (bbh): the choices are parsed from doc["input"] ("(A) text" lines).
class BbhMultiChoice : public ExtendedRegex {
 public:
  explicit BbhMultiChoice(const Kwargs& args)
      : ExtendedRegex("MultiChoiceRegexFilter", args,
                      args.string("regex_pattern", R"(#### (\-?[0-9\.\,]+))")) {}

  std::vector<Json> apply(std::vector<Json> resps,
                          const std::vector<const Json*>& docs) const override {
    static const auto choices_re = PyRegex::compile(R"(\([A-Z]\)([^\n^(]*))");
    for (size_t d = 0; d < resps.size() && d < docs.size(); ++d) {
      const Json* doc = docs[d];
      if (!doc || !doc->is_object() || !doc->contains("input") || !(*doc)["input"].is_string())
        throw UserError(
            "filter 'utils.MultiChoiceRegexFilter' needs a string 'input' field in "
            "every document (the reference raises KeyError: 'input')");
      std::string alternatives, letters;
      OrderedMap to_alpha, to_target;
      char next = 'A';
      for (const Json& c : choices_re->findall((*doc)["input"].get<std::string>())) {
        std::string m = ignores(Json(std::string(unicode::py_strip(c.get<std::string>()))));
        if (next != 'A') alternatives += '|';
        alternatives += py_re_escape(m);
        std::string letter(1, next);
        assign(to_alpha, m, "(" + letter + ")");
        assign(to_target, letter, "(" + letter + ")");
        letters += (letters.empty() ? "" : "|") + letter;
        ++next;
      }
      auto fallback_re = compile_runtime(name_, alternatives);
      auto letter_re = compile_runtime(name_, ":[\\s]*(" + letters + ")");
      Json filtered = Json::array();
      for (const Json& resp : py_iter(resps[d], "MultiChoiceRegexFilter")) {
        Json match = find(*re_, require_str(resp));
        if (!truthy(match)) {
          match = find(*fallback_re, ignores(resp), to_alpha);
          if (!truthy(match)) match = find(*letter_re, require_str(resp), to_target);
        }
        filtered.push_back(truthy(match) ? match : fallback_);
      }
      resps[d] = std::move(filtered);
    }
    return resps;
  }
};

// word2number 1.1's w2n.word_to_num over the words the bbh regex extracted (integers only:
// "point" never reaches it). Python ValueError/IndexError cases throw RuntimeError.
std::string word_to_num(std::string sentence) {
  static const std::vector<std::pair<std::string, long long>> kWords = {
      {"zero", 0},      {"one", 1},         {"two", 2},           {"three", 3},
      {"four", 4},      {"five", 5},        {"six", 6},           {"seven", 7},
      {"eight", 8},     {"nine", 9},        {"ten", 10},          {"eleven", 11},
      {"twelve", 12},   {"thirteen", 13},   {"fourteen", 14},     {"fifteen", 15},
      {"sixteen", 16},  {"seventeen", 17},  {"eighteen", 18},     {"nineteen", 19},
      {"twenty", 20},   {"thirty", 30},     {"forty", 40},        {"fifty", 50},
      {"sixty", 60},    {"seventy", 70},    {"eighty", 80},       {"ninety", 90},
      {"hundred", 100}, {"thousand", 1000}, {"million", 1000000}, {"billion", 1000000000}};
  auto value = [&](const std::string& w) -> const long long* {
    for (const auto& [k, v] : kWords)
      if (k == w) return &v;
    return nullptr;
  };
  auto fail = [](const std::string& why) {
    throw RuntimeError("filter 'utils.NumberParseRegexFilter': word2number: " + why +
                       " (the reference raises ValueError)");
  };
  for (char& c : sentence)
    if (c == '-') c = ' ';
  sentence = unicode::py_lower(sentence);
  if (unicode::py_isdigit(sentence)) {
    std::string digits;  // int(str): Unicode digits to ASCII
    unicode::for_each_codepoint(sentence, [&](char32_t c, std::string_view raw) {
      digits += (c < 0x80) ? std::string(raw) : std::string("?");
    });
    if (digits.find('?') == std::string::npos) {
      size_t nz = digits.find_first_not_of('0');
      return nz == std::string::npos ? "0" : digits.substr(nz);
    }
  }
  std::vector<std::string> clean;
  for (const auto& word : unicode::py_split(sentence))
    if (value(word) || word == "point") clean.push_back(word);
  if (clean.empty()) fail("No valid number words found!");
  auto count = [&](const char* w) { return std::count(clean.begin(), clean.end(), w); };
  if (count("thousand") > 1 || count("million") > 1 || count("billion") > 1 || count("point") > 1)
    fail("Redundant number word!");
  if (count("point") == 1) fail("decimal numbers are not produced by the bbh number regex");
  auto index = [&](const char* w) -> long long {
    auto it = std::find(clean.begin(), clean.end(), w);
    return it == clean.end() ? -1 : it - clean.begin();
  };
  long long b = index("billion"), m = index("million"), t = index("thousand");
  if ((t > -1 && (t < m || t < b)) || (m > -1 && m < b)) fail("Malformed number!");
  auto formation = [&](long long from, long long to) -> __int128 {
    std::vector<__int128> n;
    for (long long i = from; i < to; ++i) n.push_back(*value(clean[static_cast<size_t>(i)]));
    if (n.empty())
      throw RuntimeError(
          "filter 'utils.NumberParseRegexFilter': word2number: "
          "number_formation of no words (the reference raises IndexError)");
    if (n.size() == 4) return n[0] * n[1] + n[2] + n[3];
    if (n.size() == 3) return n[0] * n[1] + n[2];
    if (n.size() == 2) return (n[0] == 100 || n[1] == 100) ? n[0] * n[1] : n[0] + n[1];
    return n[0];
  };
  long long size = static_cast<long long>(clean.size());
  __int128 total = 0;
  if (size == 1) {
    total = *value(clean[0]);
  } else {
    if (b > -1) total += formation(0, b) * 1000000000;
    if (m > -1) total += formation(b > -1 ? b + 1 : 0, m) * 1000000;
    if (t > -1) total += formation(m > -1 ? m + 1 : (b > -1 ? b + 1 : 0), t) * 1000;
    if (t > -1 && t != size - 1)
      total += formation(t + 1, size);
    else if (m > -1 && m != size - 1)
      total += formation(m + 1, size);
    else if (b > -1 && b != size - 1)
      total += formation(b + 1, size);
    else if (t == -1 && m == -1 && b == -1)
      total += formation(0, size);
  }
  bool negative = total < 0;
  std::string out;
  do {
    int digit = static_cast<int>(total % 10);
    out.insert(out.begin(), static_cast<char>('0' + (digit < 0 ? -digit : digit)));
    total /= 10;
  } while (total != 0);
  return negative ? "-" + out : out;
}

// NumberParseRegexFilter: the regex, else the first English number phrase as digits.
class NumberParse : public ExtendedRegex {
 public:
  explicit NumberParse(const Kwargs& args)
      : ExtendedRegex("NumberParseRegexFilter", args,
                      args.string("regex_pattern", R"(#### (\-?[0-9\.\,]+))")) {}

  std::vector<Json> apply(std::vector<Json> resps, const std::vector<const Json*>&) const override {
    // The reference compiles this with the `regex` module; its `(?|teen|ty)` branch resets hold
    // no groups, so they are plain non-capturing groups.
    static const auto english = PyRegex::compile(
        "((?:(?:zero|one|two|three|four|five|(?:twen|thir|for|fif|six|seven|nine)(?:teen|ty)|"
        "eight(?:|een|y)|ten|eleven|twelve|fourteen|hundred|thousand|(?:m|b|tr)illion)"
        "(?:zero|one|two|three|four|five|(?:twen|thir|for|fif|six|seven|nine)(?:|teen|ty)|"
        "eight(?:een|y)|ten|eleven|twelve|fourteen|hundred|thousand|(?:m|b|tr)illion|"
        "[^\\S\r\n]|,|and|&)+)?(?:zero|one|two|three|four|five|"
        "(?:twen|thir|for|fif|six|seven|nine)(?:teen|ty)|eight(?:een|y)|ten|eleven|twelve|"
        "fourteen|hundred|thousand|(?:m|b|tr)illion))");
    for (Json& r : resps) {
      Json filtered = Json::array();
      for (const Json& resp : py_iter(r, "NumberParseRegexFilter")) {
        const std::string& text = require_str(resp);
        Json match = find(*re_, text);
        if (!truthy(match)) {
          match = find(*english, unicode::py_lower(text));
          if (truthy(match)) match = word_to_num(match.get<std::string>());
        }
        filtered.push_back(truthy(match) ? match : fallback_);
      }
      r = std::move(filtered);
    }
    return resps;
  }
};

// WordSortFilter: the words of the doc's "List:" found in the response, each kept at its last
// occurrence, in order.
class WordSort : public Filter {
 public:
  std::vector<Json> apply(std::vector<Json> resps,
                          const std::vector<const Json*>& docs) const override {
    for (size_t d = 0; d < resps.size() && d < docs.size(); ++d) {
      const Json* doc = docs[d];
      if (!doc || !doc->is_object() || !doc->contains("input") || !(*doc)["input"].is_string())
        throw UserError(
            "filter 'utils.WordSortFilter' needs a string 'input' field in every "
            "document (the reference raises KeyError: 'input')");
      const std::string& input = (*doc)["input"].get_ref<const std::string&>();
      size_t list = input.find("List:");
      if (list == std::string::npos)
        throw RuntimeError(
            "filter 'utils.WordSortFilter': the document's input has no 'List:' "
            "(the reference raises IndexError)");
      size_t end = input.find("List:", list + 5);
      std::string_view rest = std::string_view(input).substr(
          list + 5, end == std::string::npos ? std::string::npos : end - list - 5);
      std::string pattern;
      for (const auto& word : unicode::py_split(rest)) {
        if (!pattern.empty()) pattern += '|';
        pattern += "\\b";
        pattern += word;
        pattern += "\\b";
      }
      auto re = compile_runtime("utils.WordSortFilter", pattern);
      Json filtered = Json::array();
      for (const Json& resp : py_iter(resps[d], "WordSortFilter")) {
        if (!resp.is_string())
          throw RuntimeError(
              "filter 'utils.WordSortFilter': expected string responses "
              "(the reference raises TypeError)");
        Json found = re->findall(resp.get_ref<const std::string&>());
        std::vector<std::string> order;  // distinct words by last occurrence
        for (auto it = found.rbegin(); it != found.rend(); ++it) {
          std::string w = it->is_array() ? (*it)[0].get<std::string>() : it->get<std::string>();
          if (std::find(order.begin(), order.end(), w) == order.end()) order.push_back(w);
        }
        std::string out;
        for (auto it = order.rbegin(); it != order.rend(); ++it)
          out += (out.empty() && it == order.rbegin() ? "" : " ") + *it;
        filtered.push_back(out);
      }
      resps[d] = std::move(filtered);
    }
    return resps;
  }
};

}  // namespace

void register_bbh_filters(FilterRegistry& r) {
  for (const char* folder : {"zeroshot", "cot_zeroshot"}) {
    std::string prefix = std::string(folder) + "/utils.";
    r.add(prefix + "MultiChoiceRegexFilter", [](const Json& kwargs, const SourceLocation& where) {
      Kwargs args("utils.MultiChoiceRegexFilter", kwargs, where,
                  {"regex_pattern", "group_select", "fallback", "ignore_case", "ignore_punctuation",
                   "regexes_to_ignore"});
      return std::make_unique<BbhMultiChoice>(args);
    });
    r.add(prefix + "MapRegexFilter", [](const Json& kwargs, const SourceLocation& where) {
      Kwargs args("utils.MapRegexFilter", kwargs, where,
                  {"regex_pattern_to_value", "group_select", "fallback", "ignore_case",
                   "ignore_punctuation", "regexes_to_ignore"});
      Json map = args.value("regex_pattern_to_value", Json::object());
      if (!map.is_object())
        args.fail("regex_pattern_to_value", "regex_pattern_to_value must be a mapping");
      std::string joined;
      std::vector<std::pair<std::shared_ptr<const PyRegex>, Json>> regexes;
      bool first = true;
      for (auto it = map.begin(); it != map.end(); ++it) {
        joined += (first ? "" : "|") + it.key();
        first = false;
        regexes.emplace_back(compile_kwarg(args, "regex_pattern_to_value", it.key()), it.value());
      }
      return std::make_unique<MapRegex>(args, joined, std::move(regexes));
    });
    r.add(prefix + "NumberParseRegexFilter", [](const Json& kwargs, const SourceLocation& where) {
      Kwargs args("utils.NumberParseRegexFilter", kwargs, where,
                  {"regex_pattern", "group_select", "fallback", "ignore_case", "ignore_punctuation",
                   "regexes_to_ignore"});
      return std::make_unique<NumberParse>(args);
    });
    r.add(prefix + "WordSortFilter", [](const Json& kwargs, const SourceLocation& where) {
      Kwargs args("utils.WordSortFilter", kwargs, where, {}, /*extra_allowed=*/true);
      return std::make_unique<WordSort>();
    });
  }
}

}  // namespace lmeval::filters

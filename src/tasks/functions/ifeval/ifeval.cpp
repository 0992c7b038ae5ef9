// IFEval instruction checkers (the reference's lm_eval/tasks/ifeval/instructions.py as registered
// in instructions_registry.py) and leaderboard/ifeval/utils.py's process_results.
#include "lmeval/tasks/functions/ifeval.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "tasks/functions/ifeval/pcre.hpp"

namespace lmeval::ifeval {

namespace checkers {

constexpr std::string_view kLessThan = "less than";
constexpr std::string_view kAtLeast = "at least";
const std::vector<std::string> kRelations = {"less than", "at least"};

// instructions_util.LANGUAGE_CODES keys, in the reference's order.
const std::vector<std::string> kLanguageCodes = {
    "en", "es", "pt", "ar", "hi", "fr", "ru", "de", "ja", "it", "bn", "uk", "th", "ur", "ta",
    "te", "bg", "ko", "pl", "he", "fa", "vi", "ne", "sw", "kn", "mr", "gu", "pa", "ml", "fi"};

std::string lower(std::string_view s) { return unicode::py_lower(s); }
std::string_view strip(std::string_view s) { return unicode::py_strip(s); }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// str.strip(chars) for ASCII chars.
std::string_view strip_chars(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_literal(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t f = s.find(sep, pos);
    if (f == std::string_view::npos) {
      out.emplace_back(s.substr(pos));
      return out;
    }
    out.emplace_back(s.substr(pos, f - pos));
    pos = f + sep.size();
  }
}

size_t count_matches(std::string_view pattern, std::string_view s, unsigned flags = 0) {
  return PyRegex::compile(pattern, flags)->finditer(s).size();
}

// Where an instruction's problem is reported: doc key, instruction index and id.
struct Where {
  std::string key;
  size_t index;
  std::string id;
  SourceLocation at(const std::string& arg = {}) const {
    std::string f = "doc key " + key + ", instruction " + std::to_string(index) + " (" + id + ")";
    if (!arg.empty()) f += ", kwargs." + arg;
    return SourceLocation{"", 0, 0, f};
  }
};

// The kwargs of one instruction after the reference's `{k: v for k, v in kw.items() if v}`.
class Args {
 public:
  Args(const Json& kwargs, const Where& where, PyRandom& rng) : where_(where), rng_(rng) {
    if (kwargs.is_null()) return;
    if (!kwargs.is_object())
      throw UserError("IFEval kwargs must be an object", where.at(), "a JSON object of arguments");
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
      if (truthy(it.value())) values_[it.key()] = it.value();
    }
  }

  static bool truthy(const Json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<int64_t>() != 0;
    if (v.is_number_unsigned()) return v.get<uint64_t>() != 0;
    if (v.is_number_float()) return v.get<double>() != 0.0;
    if (v.is_string()) return !v.get_ref<const std::string&>().empty();
    return !v.empty();  // arrays, objects
  }

  const Json* take(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) return nullptr;
    taken_.insert(name);
    return &it->second;
  }

  std::optional<int64_t> take_int(const std::string& name) {
    const Json* v = take(name);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) return v->get<int64_t>();
    if (v->is_number_float()) {
      double d = v->get<double>();
      if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
    }
    throw UserError("IFEval argument '" + name + "' must be an integer, got " + v->dump(),
                    where_.at(name), "an integer");
  }

  std::optional<std::string> take_string(const std::string& name) {
    const Json* v = take(name);
    if (!v) return std::nullopt;
    if (!v->is_string())
      throw UserError("IFEval argument '" + name + "' must be a string, got " + v->dump(),
                      where_.at(name), "a string");
    return v->get<std::string>();
  }

  std::optional<std::vector<std::string>> take_string_list(const std::string& name) {
    const Json* v = take(name);
    if (!v) return std::nullopt;
    std::vector<std::string> out;
    if (v->is_array()) {
      for (const Json& e : *v) {
        if (!e.is_string())
          throw UserError(
              "IFEval argument '" + name + "' must be a list of strings, got " + v->dump(),
              where_.at(name), "a list of strings");
        out.push_back(e.get<std::string>());
      }
    } else {
      throw UserError("IFEval argument '" + name + "' must be a list of strings, got " + v->dump(),
                      where_.at(name), "a list of strings");
    }
    return out;
  }

  // `x = arg; if x is None or x < 0: x = random.randint(lo, hi)` (negative_too: the `< 0` part).
  int64_t int_or_random(const std::string& name, int64_t lo, int64_t hi, bool negative_too = true) {
    std::optional<int64_t> v = take_int(name);
    if (!v || (negative_too && *v < 0)) return randint(lo, hi);
    return *v;
  }

  // The comparison relation: missing -> random.choice(_COMPARISON_RELATION); else must be one.
  std::string relation(const std::string& name) {
    std::optional<std::string> r = take_string(name);
    if (!r) return choice(kRelations);
    if (*r != kLessThan && *r != kAtLeast)
      throw UserError(
          "The supported relation for comparison must be in ('less than', "
          "'at least'), but " +
              *r + " is given.",
          where_.at(name), "'less than' or 'at least'");
    return *r;
  }

  // A string argument the reference cannot draw at random here (generate_keywords needs
  // instructions_util.WORD_LIST, which is not carried over).
  std::string required_string(const std::string& name) {
    std::optional<std::string> v = take_string(name);
    if (!v)
      throw UserError("IFEval argument '" + name +
                          "' is missing or empty (the reference would "
                          "draw random keywords; not supported)",
                      where_.at(name), "a non-empty string");
    return *v;
  }

  int64_t randint(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_.randbelow(static_cast<uint64_t>(hi - lo + 1)));
  }
  const std::string& choice(const std::vector<std::string>& seq) {
    return seq[rng_.randbelow(seq.size())];
  }

  // Python raises TypeError for a keyword argument build_description does not take.
  void finish() const {
    for (const auto& [k, v] : values_) {
      if (!taken_.count(k))
        throw UserError("IFEval instruction got an unexpected argument '" + k + "'", where_.at(k),
                        "only the arguments of this instruction");
    }
  }

  const Where& where() const { return where_; }

 private:
  const Where& where_;
  PyRandom& rng_;
  std::map<std::string, Json> values_;
  std::set<std::string> taken_;
};

bool compare(const std::string& relation, int64_t actual, int64_t threshold) {
  return relation == kLessThan ? actual < threshold : actual >= threshold;
}

std::shared_ptr<const PyRegex> compile_user_regex(const std::string& pattern, unsigned flags,
                                                  const Where& where, const std::string& arg) {
  try {
    return PyRegex::compile(pattern, flags);
  } catch (const UserError& e) {
    throw UserError(
        "IFEval argument '" + arg + "' is not a valid regular expression: " + e.message(),
        where.at(arg), "a Python regular expression");
  }
}

using Check = std::function<bool(const std::string&)>;

// langdetect.detect(value) == lang, a LangDetectException counting as followed.
bool language_is(const std::string& value, const std::string& lang) {
  std::optional<std::string> got = detect_language(value);
  if (!got) return true;
  return *got == lang;
}

// Builds the checker for one instruction, drawing missing arguments as the reference does.
Check build(const std::string& id, Args& a) {
  const Where& where = a.where();
  if (id == "keywords:existence") {
    std::optional<std::vector<std::string>> kws = a.take_string_list("keywords");
    if (!kws)
      throw UserError(
          "IFEval argument 'keywords' is missing or empty (the reference would draw "
          "random keywords; not supported)",
          where.at("keywords"), "a list of strings");
    std::sort(kws->begin(), kws->end());
    std::vector<std::shared_ptr<const PyRegex>> res;
    for (const std::string& k : *kws)
      res.push_back(compile_user_regex(k, PyRegex::IGNORECASE, where, "keywords"));
    return [res](const std::string& v) {
      for (const auto& re : res)
        if (!re->search(v)) return false;
      return true;
    };
  }
  if (id == "keywords:frequency") {
    std::optional<std::string> kw = a.take_string("keyword");
    if (!kw)
      throw UserError(
          "IFEval argument 'keyword' is missing or empty (the reference would draw a "
          "random keyword; not supported)",
          where.at("keyword"), "a non-empty string");
    std::string keyword(strip(*kw));
    int64_t frequency = a.int_or_random("frequency", 1, 3);
    std::string relation = a.relation("relation");
    auto re = compile_user_regex(keyword, PyRegex::IGNORECASE, where, "keyword");
    return [re, frequency, relation](const std::string& v) {
      return compare(relation, static_cast<int64_t>(re->finditer(v).size()), frequency);
    };
  }
  if (id == "keywords:forbidden_words") {
    std::optional<std::vector<std::string>> words = a.take_string_list("forbidden_words");
    if (!words)
      throw UserError(
          "IFEval argument 'forbidden_words' is missing or empty (the reference would "
          "draw random keywords; not supported)",
          where.at("forbidden_words"), "a list of strings");
    std::set<std::string> uniq(words->begin(), words->end());  // sorted(set(...))
    std::vector<std::shared_ptr<const PyRegex>> res;
    for (const std::string& w : uniq)
      res.push_back(
          compile_user_regex("\\b" + w + "\\b", PyRegex::IGNORECASE, where, "forbidden_words"));
    return [res](const std::string& v) {
      for (const auto& re : res)
        if (re->search(v)) return false;
      return true;
    };
  }
  if (id == "keywords:letter_frequency") {
    std::optional<std::string> letter_arg = a.take_string("letter");
    std::string letter;
    bool valid = false;
    if (letter_arg && unicode::length(*letter_arg) == 1) {
      std::string low = lower(*letter_arg);
      if (unicode::length(low) != 1)
        throw UserError("IFEval argument 'letter' lower-cases to more than one character",
                        where.at("letter"), "one ASCII letter");
      valid = low[0] >= 'a' && low[0] <= 'z' && low.size() == 1;
      if (valid) letter = low;
    }
    if (!valid) {
      static const std::vector<std::string> kAsciiLetters = [] {
        std::vector<std::string> v;
        for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
        for (char c = 'A'; c <= 'Z'; ++c) v.emplace_back(1, c);
        return v;
      }();
      letter = lower(a.choice(kAsciiLetters));
    }
    int64_t frequency = a.int_or_random("let_frequency", 1, 10);
    std::string relation = a.relation("let_relation");
    char ch = letter[0];
    return [ch, frequency, relation](const std::string& v) {
      std::string low = lower(v);
      int64_t n = std::count(low.begin(), low.end(), ch);
      return compare(relation, n, frequency);
    };
  }
  if (id == "language:response_language") {
    std::optional<std::string> lang = a.take_string("language");
    std::string language = lang ? *lang : a.choice(kLanguageCodes);
    if (std::find(kLanguageCodes.begin(), kLanguageCodes.end(), language) == kLanguageCodes.end())
      throw UserError("IFEval language '" + language +
                          "' is not one of the reference's "
                          "LANGUAGE_CODES",
                      where.at("language"), "an ISO 639-1 code it lists");
    return [language](const std::string& v) { return language_is(v, language); };
  }
  if (id == "length_constraints:number_sentences") {
    int64_t n = a.int_or_random("num_sentences", 1, 20);
    std::string relation = a.relation("relation");
    return [n, relation](const std::string& v) {
      return compare(relation, static_cast<int64_t>(count_sentences(v)), n);
    };
  }
  if (id == "length_constraints:number_paragraphs") {
    int64_t n = a.int_or_random("num_paragraphs", 1, 5);
    return [n](const std::string& v) {
      auto parts = PyRegex::compile("\\s?\\*\\*\\*\\s?")->split(v);
      int64_t count = static_cast<int64_t>(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) {
        std::string_view p = parts[i] ? std::string_view(*parts[i]) : std::string_view();
        if (strip(p).empty()) {
          if (i == 0 || i + 1 == parts.size()) {
            --count;
          } else {
            return false;
          }
        }
      }
      return count == n;
    };
  }
  if (id == "length_constraints:number_words") {
    int64_t n = a.int_or_random("num_words", 100, 500);
    std::string relation = a.relation("relation");
    return [n, relation](const std::string& v) {
      return compare(relation, static_cast<int64_t>(count_words(v)), n);
    };
  }
  if (id == "length_constraints:nth_paragraph_first_word") {
    int64_t num = a.int_or_random("num_paragraphs", 1, 5);
    std::optional<int64_t> nth_arg = a.take_int("nth_paragraph");
    int64_t nth = nth_arg.value_or(0);
    if (!nth_arg || nth <= 0 || nth > num) nth = a.randint(1, num + 1);
    std::optional<std::string> fw = a.take_string("first_word");
    if (!fw)
      throw UserError(
          "IFEval argument 'first_word' is missing or empty (the reference would draw "
          "a random keyword; not supported)",
          where.at("first_word"), "a non-empty string");
    std::string first_word = lower(*fw);
    return [num, nth, first_word](const std::string& v) {
      std::vector<std::string> paragraphs = split_literal(v, "\n\n");
      int64_t count = static_cast<int64_t>(paragraphs.size());
      for (const std::string& p : paragraphs)
        if (strip(p).empty()) --count;
      std::string_view paragraph;
      if (nth <= count) {
        paragraph = strip(paragraphs[static_cast<size_t>(nth - 1)]);
        if (paragraph.empty()) return false;
      } else {
        return false;
      }
      std::string word(strip(unicode::py_split(paragraph)[0]));
      std::string_view w = word;
      while (!w.empty() && w.front() == '\'') w.remove_prefix(1);
      while (!w.empty() && w.front() == '"') w.remove_prefix(1);
      std::string got;
      bool stop = false;
      unicode::for_each_codepoint(w, [&](char32_t c, std::string_view raw) {
        if (stop) return;
        if (c == '.' || c == ',' || c == '?' || c == '!' || c == '\'' || c == '"') {
          stop = true;
          return;
        }
        got += lower(raw);
      });
      return count == num && got == first_word;
    };
  }
  if (id == "detectable_content:number_placeholders") {
    int64_t n = a.int_or_random("num_placeholders", 1, 4);
    return [n](const std::string& v) {
      return static_cast<int64_t>(count_matches("\\[.*?\\]", v)) >= n;
    };
  }
  if (id == "detectable_content:postscript") {
    std::optional<std::string> m = a.take_string("postscript_marker");
    static const std::vector<std::string> kMarkers = {"P.S.", "P.P.S"};
    std::string marker = m ? std::string(strip(*m)) : a.choice(kMarkers);
    std::string pattern;
    if (marker == "P.P.S") {
      pattern = "\\s*p\\.\\s?p\\.\\s?s.*$";
    } else if (marker == "P.S.") {
      pattern = "\\s*p\\.\\s?s\\..*$";
    } else {
      pattern = "\\s*" + lower(marker) + ".*$";
    }
    auto re = compile_user_regex(pattern, PyRegex::MULTILINE, where, "postscript_marker");
    return [re](const std::string& v) { return !re->finditer(lower(v)).empty(); };
  }
  if (id == "detectable_format:number_bullet_lists") {
    int64_t n = a.int_or_random("num_bullets", 1, 5);
    return [n](const std::string& v) {
      size_t count = count_matches("^\\s*\\*[^\\*].*$", v, PyRegex::MULTILINE) +
                     count_matches("^\\s*-.*$", v, PyRegex::MULTILINE);
      return static_cast<int64_t>(count) == n;
    };
  }
  if (id == "detectable_format:constrained_response") {
    return [](const std::string& v) {
      std::string_view s = strip(v);
      for (std::string_view opt : {"My answer is yes.", "My answer is no.", "My answer is maybe."})
        if (s.find(opt) != std::string_view::npos) return true;
      return false;
    };
  }
  if (id == "detectable_format:number_highlighted_sections") {
    int64_t n = a.int_or_random("num_highlights", 1, 4);
    return [n](const std::string& v) {
      int64_t count = 0;
      for (const PyMatch& m : PyRegex::compile("\\*[^\\n\\*]*\\*")->finditer(v)) {
        if (!strip(strip_chars(*m.group(), "*")).empty()) ++count;
      }
      for (const PyMatch& m : PyRegex::compile("\\*\\*[^\\n\\*]*\\*\\*")->finditer(v)) {
        std::string_view h = *m.group();
        if (starts_with(h, "**")) h.remove_prefix(2);
        if (ends_with(h, "**")) h.remove_suffix(2);
        if (!strip(h).empty()) ++count;
      }
      return count >= n;
    };
  }
  if (id == "detectable_format:multiple_sections") {
    std::optional<std::string> s = a.take_string("section_spliter");
    static const std::vector<std::string> kSpliters = {"Section", "SECTION"};
    std::string spliter = s ? std::string(strip(*s)) : a.choice(kSpliters);
    int64_t n = a.int_or_random("num_sections", 1, 5);
    auto re = compile_user_regex("\\s?" + spliter + "\\s?\\d+\\s?", 0, where, "section_spliter");
    return [re, n](const std::string& v) {
      return static_cast<int64_t>(re->split(v).size()) - 1 >= n;
    };
  }
  if (id == "detectable_format:json_format") {
    return [](const std::string& v) {
      std::string_view s = strip(v);
      for (std::string_view p : {"```json", "```Json", "```JSON", "```"})
        if (starts_with(s, p)) s.remove_prefix(p.size());
      if (ends_with(s, "```")) s.remove_suffix(3);
      s = strip(s);
      return Json::accept(s);
    };
  }
  if (id == "detectable_format:title") {
    return [](const std::string& v) {
      for (const PyMatch& m : PyRegex::compile("<<[^\\n]+>>")->finditer(v)) {
        std::string_view t = *m.group();
        size_t b = t.find_first_not_of('<');
        t = b == std::string_view::npos ? std::string_view() : t.substr(b);
        size_t e = t.find_last_not_of('>');
        t = e == std::string_view::npos ? std::string_view() : t.substr(0, e + 1);
        if (!strip(t).empty()) return true;
      }
      return false;
    };
  }
  if (id == "combination:two_responses") {
    return [](const std::string& v) {
      std::vector<std::string> parts = split_literal(v, "******");
      std::vector<std::string_view> valid;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (strip(parts[i]).empty()) {
          if (i != 0 && i + 1 != parts.size()) return false;
        } else {
          valid.push_back(parts[i]);
        }
      }
      return valid.size() == 2 && strip(valid[0]) != strip(valid[1]);
    };
  }
  if (id == "combination:repeat_prompt") {
    std::optional<std::string> p = a.take_string("prompt_to_repeat");
    if (!p)
      throw UserError("prompt_to_repeat must be set.", where.at("prompt_to_repeat"),
                      "a non-empty string");
    std::string prompt = lower(strip(*p));
    return [prompt](const std::string& v) { return starts_with(lower(strip(v)), prompt); };
  }
  if (id == "startend:end_checker") {
    std::optional<std::string> e = a.take_string("end_phrase");
    static const std::vector<std::string> kEndings = {"Any other questions?",
                                                      "Is there anything else I can help with?"};
    std::string phrase = e ? std::string(strip(*e)) : a.choice(kEndings);
    phrase = lower(strip(phrase));
    return [phrase](const std::string& v) {
      return ends_with(lower(strip_chars(strip(v), "\"")), phrase);
    };
  }
  if (id == "startend:quotation") {
    return [](const std::string& v) {
      std::string_view s = strip(v);
      return unicode::length(s) > 1 && s.front() == '"' && s.back() == '"';
    };
  }
  if (id == "change_case:capital_word_frequency") {
    int64_t n = a.int_or_random("capital_frequency", 1, 20, /*negative_too=*/false);
    std::string relation = a.relation("capital_relation");
    return [n, relation](const std::string& v) {
      int64_t count = 0;
      for (const std::string& w : word_tokenize(v))
        if (py_isupper(w)) ++count;
      return compare(relation, count, n);
    };
  }
  if (id == "change_case:english_capital") {
    return [](const std::string& v) { return py_isupper(v) && language_is(v, "en"); };
  }
  if (id == "change_case:english_lowercase") {
    return [](const std::string& v) { return py_islower(v) && language_is(v, "en"); };
  }
  if (id == "punctuation:no_comma") {
    return [](const std::string& v) { return v.find(',') == std::string::npos; };
  }
  throw UserError("Unknown IFEval instruction id '" + id + "'", where.at(),
                  "one of the reference's INSTRUCTION_DICT ids");
}

struct Built {
  std::vector<Check> checks;
};

Built build_all(const Json& doc, PyRandom& rng) {
  if (!doc.is_object()) throw UserError("IFEval doc must be an object", {}, "a JSON object");
  std::string key = "?";
  if (doc.contains("key"))
    key = doc["key"].is_string() ? doc["key"].get<std::string>() : doc["key"].dump();
  SourceLocation loc{"", 0, 0, "doc key " + key};
  auto ids_it = doc.find("instruction_id_list");
  if (ids_it == doc.end() || !ids_it->is_array())
    throw UserError("IFEval doc has no instruction_id_list array", loc,
                    "a list of instruction ids");
  auto kw_it = doc.find("kwargs");
  if (kw_it == doc.end() || !kw_it->is_array() || kw_it->size() != ids_it->size())
    throw UserError("IFEval doc's kwargs must be a list with one object per instruction", loc,
                    std::to_string(ids_it->size()) + " objects");
  Built out;
  for (size_t i = 0; i < ids_it->size(); ++i) {
    const Json& idj = (*ids_it)[i];
    if (!idj.is_string())
      throw UserError("IFEval instruction id must be a string, got " + idj.dump(), loc, "a string");
    Where where{key, i, idj.get<std::string>()};
    Args args((*kw_it)[i], where, rng);
    out.checks.push_back(build(where.id, args));
    args.finish();
  }
  return out;
}

// The loose variants of utils.test_instruction_following_loose, in its order.
std::vector<std::string> loose_variants(const std::string& response) {
  std::vector<std::string> r = split_literal(response, "\n");
  auto join = [&](size_t b, size_t e) {
    std::string out;
    for (size_t i = b; i < e; ++i) {
      if (i > b) out += '\n';
      out += r[i];
    }
    return std::string(strip(out));
  };
  std::string remove_first = join(std::min<size_t>(1, r.size()), r.size());
  std::string remove_last = join(0, r.size() - 1);
  std::string remove_both = r.size() >= 2 ? join(1, r.size() - 1) : std::string();
  auto no_star = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '*'), s.end());
    return s;
  };
  return {response,    no_star(response),     remove_first,         remove_last,
          remove_both, no_star(remove_first), no_star(remove_last), no_star(remove_both)};
}

std::mutex& global_mu() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
PyRandom& global_rng() {
  static PyRandom* rng = new PyRandom(0);
  return *rng;
}

}  // namespace checkers

Json process_results(const Json& doc, const std::string& raw_response, PyRandom& rng) {
  using namespace checkers;
  // The reference sees a Python str; bytes that are not UTF-8 become U+FFFD (errors="replace").
  const std::string response = unicode::is_valid_utf8(raw_response)
                                   ? raw_response
                                   : unicode::encode(unicode::decode(raw_response));
  // The reference builds every checker twice (strict pass, then loose pass), drawing from the
  // global random generator each time.
  Built strict = build_all(doc, rng);
  Built loose = build_all(doc, rng);

  Json strict_list = Json::array();
  bool strict_all = true;
  bool nonempty = !strip(response).empty();
  for (const Check& c : strict.checks) {
    bool ok = nonempty && c(response);
    strict_list.push_back(ok);
    strict_all = strict_all && ok;
  }
  std::vector<std::string> variants = loose_variants(response);
  Json loose_list = Json::array();
  bool loose_all = true;
  for (const Check& c : loose.checks) {
    bool ok = false;
    for (const std::string& r : variants) {
      if (!strip(r).empty() && c(r)) {
        ok = true;
        break;
      }
    }
    loose_list.push_back(ok);
    loose_all = loose_all && ok;
  }
  Json out = Json::object();
  out["prompt_level_strict_acc"] = strict_all;
  out["inst_level_strict_acc"] = std::move(strict_list);
  out["prompt_level_loose_acc"] = loose_all;
  out["inst_level_loose_acc"] = std::move(loose_list);
  return out;
}

Json process_results(const Json& doc, const std::string& response) {
  std::lock_guard<std::mutex> lock(checkers::global_mu());
  return process_results(doc, response, checkers::global_rng());
}

void seed_global_random(int64_t seed) {
  std::lock_guard<std::mutex> lock(checkers::global_mu());
  checkers::global_rng() = PyRandom(seed);
}

double agg_inst_level_acc(const std::vector<Json>& items) {
  size_t n = 0, ok = 0;
  for (const Json& item : items) {
    if (!item.is_array())
      throw UserError("agg_inst_level_acc expects lists of booleans, got " + item.dump(), {},
                      "a list of booleans");
    for (const Json& b : item) {
      if (!b.is_boolean())
        throw UserError("agg_inst_level_acc expects lists of booleans, got " + item.dump(), {},
                        "a list of booleans");
      ++n;
      if (b.get<bool>()) ++ok;
    }
  }
  if (n == 0) throw UserError("agg_inst_level_acc over no instructions (division by zero)");
  return static_cast<double>(ok) / static_cast<double>(n);
}

std::vector<std::string> supported_instruction_ids() {
  return {"keywords:existence",
          "keywords:frequency",
          "keywords:forbidden_words",
          "keywords:letter_frequency",
          "language:response_language",
          "length_constraints:number_sentences",
          "length_constraints:number_paragraphs",
          "length_constraints:number_words",
          "length_constraints:nth_paragraph_first_word",
          "detectable_content:number_placeholders",
          "detectable_content:postscript",
          "detectable_format:number_bullet_lists",
          "detectable_format:constrained_response",
          "detectable_format:number_highlighted_sections",
          "detectable_format:multiple_sections",
          "detectable_format:json_format",
          "detectable_format:title",
          "combination:two_responses",
          "combination:repeat_prompt",
          "startend:end_checker",
          "change_case:capital_word_frequency",
          "change_case:english_capital",
          "change_case:english_lowercase",
          "punctuation:no_comma",
          "startend:quotation"};
}

bool py_isupper(std::string_view s) {
  bool cased = false;
  bool ok = true;
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (!ok) return;
    if (detail::py_char_islower(c) || detail::py_char_istitle(c)) {
      ok = false;
    } else if (!cased && detail::py_char_isupper(c)) {
      cased = true;
    }
  });
  return ok && cased;
}

bool py_islower(std::string_view s) {
  bool cased = false;
  bool ok = true;
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (!ok) return;
    if (detail::py_char_isupper(c) || detail::py_char_istitle(c)) {
      ok = false;
    } else if (!cased && detail::py_char_islower(c)) {
      cased = true;
    }
  });
  return ok && cased;
}

}  // namespace lmeval::ifeval

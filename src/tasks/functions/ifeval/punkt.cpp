// nltk's Punkt sentence tokenizer (English punkt_tab parameters), NLTKWordTokenizer and
// RegexpTokenizer(r"\w+"), as nltk 3.10.4 runs them for IFEval's sentence/word counts.
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/functions/ifeval.hpp"
#include "tasks/functions/ifeval/pcre.hpp"

namespace lmeval::ifeval {

namespace data {
extern const char* const kPunktAbbrevTypes;
extern const char* const kPunktCollocations;
extern const char* const kPunktSentStarters;
extern const char* const kPunktOrthoContext;
}  // namespace data

namespace punkt {

using detail::Pcre;
using detail::Spans;

// nltk uses the `regex` module, whose \w also covers marks and Join_Control.
#define LMEVAL_PUNKT_W "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}"

constexpr int kOrthoBegUc = 1 << 1;
constexpr int kOrthoMidUc = 1 << 2;
constexpr int kOrthoUnkUc = 1 << 3;
constexpr int kOrthoBegLc = 1 << 4;
constexpr int kOrthoMidLc = 1 << 5;
constexpr int kOrthoUnkLc = 1 << 6;
constexpr int kOrthoUc = kOrthoBegUc + kOrthoMidUc + kOrthoUnkUc;
constexpr int kOrthoLc = kOrthoBegLc + kOrthoMidLc + kOrthoUnkLc;

struct Params {
  std::unordered_set<std::string> abbrev_types;
  std::set<std::pair<std::string, std::string>> collocations;
  std::unordered_set<std::string> sent_starters;
  std::unordered_map<std::string, int> ortho_context;

  int ortho(const std::string& typ) const {
    auto it = ortho_context.find(typ);
    return it == ortho_context.end() ? 0 : it->second;
  }
};

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t e = s.find('\n', pos);
    if (e == std::string_view::npos) e = s.size();
    if (e > pos) out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

const Params& params() {
  static const Params* p = [] {
    auto* q = new Params();
    for (auto l : lines_of(data::kPunktAbbrevTypes)) q->abbrev_types.emplace(l);
    for (auto l : lines_of(data::kPunktSentStarters)) q->sent_starters.emplace(l);
    for (auto l : lines_of(data::kPunktCollocations)) {
      size_t t = l.find('\t');
      q->collocations.emplace(std::string(l.substr(0, t)), std::string(l.substr(t + 1)));
    }
    for (auto l : lines_of(data::kPunktOrthoContext)) {
      size_t t = l.find('\t');
      q->ortho_context[std::string(l.substr(0, t))] = std::stoi(std::string(l.substr(t + 1)));
    }
    return q;
  }();
  return *p;
}

// PunktLanguageVars regexes (English defaults) and PunktToken's.
#define LMEVAL_PUNKT_NONWORD \
  "(?:[)\";}\\]\\*:@\\'\\({\\[\\x{2018}\\x{2019}\\x{201c}\\x{201d}\\x{ab}\\x{bb}?!])"
#define LMEVAL_PUNKT_MULTICHAR "(?:\\-{2,}|\\.{2,}|(?:\\.\\s){2,}\\.)"
#define LMEVAL_PUNKT_WORDSTART "[^\\(\\\"\\`{\\[:;&\\#\\*@\\)}\\]\\-,]"

struct Regexes {
  Pcre word_tokenizer{"(" LMEVAL_PUNKT_MULTICHAR "|(?=" LMEVAL_PUNKT_WORDSTART
                      ")\\S+?(?=\\s|$|" LMEVAL_PUNKT_NONWORD "|" LMEVAL_PUNKT_MULTICHAR
                      "|,(?=$|\\s|" LMEVAL_PUNKT_NONWORD "|" LMEVAL_PUNKT_MULTICHAR "))|\\S)"};
  Pcre period_context{"[.?!](?=(" LMEVAL_PUNKT_NONWORD "|\\s+(\\S+)))"};
  Pcre boundary_realignment{
      "[\"')\\]}\\x{2018}\\x{2019}\\x{201c}\\x{201d}\\x{ab}\\x{bb}]+?(?:\\s+|(?=--)|$)",
      0x00000400u /* PCRE2_MULTILINE */};
  Pcre numeric{"^-?[\\.,]?\\d[\\d,\\.-]*\\.?$"};
  Pcre ellipsis{"\\.\\.+$"};
  Pcre initial{"(?!\\d)[" LMEVAL_PUNKT_W "]\\.$"};
  Pcre non_punct{"(?!\\d)[" LMEVAL_PUNKT_W "]"};
};

const Regexes& regexes() {
  static const Regexes* r = new Regexes();
  return *r;
}

struct Token {
  std::string tok;
  std::string type;
  bool period_final = false;
  bool sentbreak = false;
  bool abbr = false;
  bool ellipsis = false;

  explicit Token(std::string t) : tok(std::move(t)) {
    std::string low = unicode::py_lower(tok);
    type = regexes().numeric.search(low) ? std::string("##number##") : low;
    period_final = !tok.empty() && tok.back() == '.';
  }
  std::string type_no_period() const {
    if (unicode::length(type) > 1 && type.back() == '.') return type.substr(0, type.size() - 1);
    return type;
  }
  std::string type_no_sentperiod() const { return sentbreak ? type_no_period() : type; }
  char32_t first_char() const {
    char32_t c = 0;
    bool done = false;
    unicode::for_each_codepoint(tok, [&](char32_t ch, std::string_view) {
      if (!done) c = ch;
      done = true;
    });
    return c;
  }
  bool first_upper() const { return detail::py_char_isupper(first_char()); }
  bool first_lower() const { return detail::py_char_islower(first_char()); }
  bool is_ellipsis() const { return regexes().ellipsis.search(tok, 0, true).has_value(); }
  bool is_initial() const { return regexes().initial.search(tok, 0, true).has_value(); }
};

// PunktLanguageVars.word_tokenize.
std::vector<std::string> punkt_word_tokenize(std::string_view s) {
  std::vector<std::string> out;
  for (const Spans& m : regexes().word_tokenizer.finditer(s))
    out.emplace_back(s.substr(m[1].first, m[1].second - m[1].first));
  return out;
}

// PunktBaseClass._tokenize_words.
std::vector<Token> tokenize_words(std::string_view text) {
  std::vector<Token> out;
  size_t pos = 0;
  while (true) {
    size_t e = text.find('\n', pos);
    std::string_view line = text.substr(pos, e == std::string_view::npos ? e : e - pos);
    if (!unicode::py_strip(line).empty()) {
      for (std::string& t : punkt_word_tokenize(line)) out.emplace_back(std::move(t));
    }
    if (e == std::string_view::npos) break;
    pos = e + 1;
  }
  return out;
}

void first_pass(Token& t) {
  const Params& p = params();
  if (t.tok == "." || t.tok == "?" || t.tok == "!") {
    t.sentbreak = true;
  } else if (t.is_ellipsis()) {
    t.ellipsis = true;
  } else if (t.period_final &&
             !(t.tok.size() >= 2 && t.tok.compare(t.tok.size() - 2, 2, "..") == 0)) {
    std::string head = unicode::py_lower(std::string_view(t.tok).substr(0, t.tok.size() - 1));
    size_t dash = head.rfind('-');
    std::string last = dash == std::string::npos ? head : head.substr(dash + 1);
    if (p.abbrev_types.count(head) || p.abbrev_types.count(last)) {
      t.abbr = true;
    } else {
      t.sentbreak = true;
    }
  }
}

enum class Ortho { kFalse, kTrue, kUnknown };

Ortho ortho_heuristic(const Token& t) {
  if (t.tok == ";" || t.tok == ":" || t.tok == "," || t.tok == "." || t.tok == "!" || t.tok == "?")
    return Ortho::kFalse;
  int oc = params().ortho(t.type_no_sentperiod());
  if (t.first_upper() && (oc & kOrthoLc) && !(oc & kOrthoMidUc)) return Ortho::kTrue;
  if (t.first_lower() && ((oc & kOrthoUc) || !(oc & kOrthoBegLc))) return Ortho::kFalse;
  return Ortho::kUnknown;
}

void second_pass(Token& t1, const Token& t2) {
  const Params& p = params();
  if (!t1.period_final) return;
  std::string typ = t1.type_no_period();
  std::string next_typ = t2.type_no_sentperiod();
  bool tok_is_initial = t1.is_initial();
  if (p.collocations.count({typ, next_typ})) {
    t1.sentbreak = false;
    t1.abbr = true;
    return;
  }
  if ((t1.abbr || t1.ellipsis) && !tok_is_initial) {
    Ortho h = ortho_heuristic(t2);
    if (h == Ortho::kTrue) {
      t1.sentbreak = true;
      return;
    }
    if (t2.first_upper() && p.sent_starters.count(next_typ)) {
      t1.sentbreak = true;
      return;
    }
  }
  if (tok_is_initial || typ == "##number##") {
    Ortho h = ortho_heuristic(t2);
    if (h == Ortho::kFalse) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
    if (h == Ortho::kUnknown && tok_is_initial && t2.first_upper() &&
        !(p.ortho(next_typ) & kOrthoLc)) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
  }
}

// PunktSentenceTokenizer.text_contains_sentbreak.
bool text_contains_sentbreak(std::string_view text) {
  std::vector<Token> toks = tokenize_words(text);
  for (Token& t : toks) first_pass(t);
  for (size_t i = 0; i < toks.size(); ++i) {
    if (i + 1 < toks.size()) second_pass(toks[i], toks[i + 1]);
    if (toks[i].sentbreak && i + 1 < toks.size()) return true;
  }
  return false;
}

bool is_py_whitespace_ascii(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

struct Slice {
  size_t start, stop;
};

// _match_potential_end_contexts + _slices_from_text.
std::vector<Slice> slices_from_text(std::string_view text) {
  std::vector<Slice> out;
  size_t last_break = 0;
  auto handle = [&](const Spans& m, Slice word) {
    std::string context(text.substr(word.start, word.stop - word.start));
    context += text.substr(m[0].first, m[0].second - m[0].first);
    if (m[1].first != Pcre::npos) context += text.substr(m[1].first, m[1].second - m[1].first);
    if (text_contains_sentbreak(context)) {
      out.push_back({last_break, m[0].second});
      if (m[2].first != Pcre::npos && m[2].second > m[2].first) {
        last_break = m[2].first;
      } else {
        last_break = m[0].second;
      }
    }
  };
  Slice previous_slice{0, 0};
  std::optional<Spans> previous_match;
  for (const Spans& m : regexes().period_context.finditer(text)) {
    size_t start = m[0].first;
    std::string_view before = text.substr(previous_slice.stop, start - previous_slice.stop);
    size_t idx = 0;
    for (size_t i = before.size(); i-- > 0;) {
      if (is_py_whitespace_ascii(before[i])) {
        idx = i;
        break;
      }
    }
    if (idx) {
      idx += previous_slice.stop + 1;
    } else {
      idx = previous_slice.start;
    }
    Slice prev_word{idx, start};
    if (previous_match && previous_slice.stop <= prev_word.start)
      handle(*previous_match, previous_slice);
    previous_match = m;
    previous_slice = prev_word;
  }
  if (previous_match) handle(*previous_match, previous_slice);
  out.push_back({last_break, unicode::py_rstrip(text).size()});
  return out;
}

// _realign_boundaries.
std::vector<Slice> realign_boundaries(std::string_view text, const std::vector<Slice>& slices) {
  std::vector<Slice> out;
  size_t realign = 0;
  auto nonempty = [&](Slice s) { return s.start < s.stop && s.start < text.size(); };
  for (size_t i = 0; i < slices.size(); ++i) {
    Slice s1{slices[i].start + realign, slices[i].stop};
    if (i + 1 == slices.size()) {
      if (nonempty(s1)) out.push_back(s1);
      continue;
    }
    Slice s2 = slices[i + 1];
    std::string_view t2 =
        s2.start < s2.stop ? text.substr(s2.start, s2.stop - s2.start) : std::string_view();
    auto m = regexes().boundary_realignment.search(t2, 0, true);
    if (m) {
      std::string_view g = t2.substr((*m)[0].first, (*m)[0].second - (*m)[0].first);
      out.push_back({s1.start, s2.start + unicode::py_rstrip(g).size()});
      realign = (*m)[0].second;
    } else {
      realign = 0;
      if (nonempty(s1)) out.push_back(s1);
    }
  }
  return out;
}

std::vector<Slice> sentence_slices(std::string_view text) {
  return realign_boundaries(text, slices_from_text(text));
}

// NLTKWordTokenizer (nltk/tokenize/destructive.py), regexes applied in its order.
struct WordRegexes {
  std::vector<std::pair<std::unique_ptr<Pcre>, std::string>> before_pad, after_pad;
  WordRegexes() {
    auto add = [](auto& v, const char* p, const char* r, uint32_t opts = 0) {
      v.emplace_back(std::make_unique<Pcre>(p, opts), r);
    };
    constexpr uint32_t kCaseless = 0x00000008u;  // PCRE2_CASELESS
    // STARTING_QUOTES
    add(before_pad, "([\\x{ab}\\x{201c}\\x{2018}\\x{201e}]|[`]+)", " \\1 ");
    add(before_pad, "^\\\"", "``");
    add(before_pad, "(``)", " \\1 ");
    add(before_pad, "([ \\(\\[{<])(\\\"|\\'{2})", "\\1 `` ");
    add(before_pad,
        "(?<![" LMEVAL_PUNKT_W "])(\\')(?!(?:re|ve|ll|m|t|s|d|n)(?![" LMEVAL_PUNKT_W
        "]))(?=[" LMEVAL_PUNKT_W "])",
        "\\1 ", kCaseless);
    // PUNCTUATION
    add(before_pad, "([^\\.])(\\.)([\\]\\)}>\"\\'\\x{bb}\\x{201d}\\x{2019} ]*+)\\s*$",
        "\\1 \\2 \\3 ");
    add(before_pad, "([:,])([^\\d])", " \\1 \\2");
    add(before_pad, "([:,])$", " \\1 ");
    add(before_pad, "\\.{2,}", " \\g<0> ");
    add(before_pad, "[;@#$%&]", " \\g<0> ");
    add(before_pad, "[\\x{2012}-\\x{2015}]", " \\g<0> ");
    add(before_pad, "([^\\.])(\\.)([\\]\\)}>\"\\']*)\\s*$", "\\1 \\2\\3 ");
    add(before_pad, "[?!]", " \\g<0> ");
    add(before_pad, "([^'])' ", "\\1 ' ");
    add(before_pad, "[*]", " \\g<0> ");
    // PARENS_BRACKETS, DOUBLE_DASHES
    add(before_pad, "[\\]\\[\\(\\)\\{\\}\\<\\>]", " \\g<0> ");
    add(before_pad, "--", " -- ");
    // ENDING_QUOTES (after padding the text with spaces)
    add(after_pad, "([\\x{bb}\\x{201d}\\x{2019}])", " \\1 ");
    add(after_pad, "''", " '' ");
    add(after_pad, "\"", " '' ");
    add(after_pad, "\\s+", " ");
    add(after_pad, "([^' ])('[sS]|'[mM]|'[dD]|') ", "\\1 \\2 ");
    add(after_pad, "([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "\\1 \\2 ");
    // CONTRACTIONS2 and CONTRACTIONS3 (compiled with the standard `re` module).
    for (const char* p :
         {"(?i)\\b(can)(?#X)(not)\\b", "(?i)\\b(d)(?#X)('ye)\\b", "(?i)\\b(gim)(?#X)(me)\\b",
          "(?i)\\b(gon)(?#X)(na)\\b", "(?i)\\b(got)(?#X)(ta)\\b", "(?i)\\b(lem)(?#X)(me)\\b",
          "(?i)\\b(more)(?#X)('n)\\b", "(?i)\\b(wan)(?#X)(na)(?=\\s)", "(?i) ('t)(?#X)(is)\\b",
          "(?i) ('t)(?#X)(was)\\b"})
      add(after_pad, p, " \\1 \\2 ");
  }
};

const WordRegexes& word_regexes() {
  static const WordRegexes* r = new WordRegexes();
  return *r;
}

std::vector<std::string> nltk_word_tokenizer(std::string_view sentence) {
  const WordRegexes& w = word_regexes();
  std::string text(sentence);
  for (const auto& [re, repl] : w.before_pad) text = re->sub(text, repl);
  text = " " + text + " ";
  for (const auto& [re, repl] : w.after_pad) text = re->sub(text, repl);
  // str.split(): Unicode whitespace.
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  unicode::for_each_codepoint(text, [&](char32_t c, std::string_view raw) {
    if (unicode::py_isspace(c)) {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur.append(raw);
      in_word = true;
    }
  });
  if (in_word) out.push_back(std::move(cur));
  return out;
}

}  // namespace punkt

std::vector<std::string> sent_tokenize(std::string_view text) {
  std::vector<std::string> out;
  for (const punkt::Slice& s : punkt::sentence_slices(text))
    out.emplace_back(text.substr(s.start, s.stop - s.start));
  return out;
}

size_t count_sentences(std::string_view text) { return punkt::sentence_slices(text).size(); }

std::vector<std::string> word_tokenize(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string& s : sent_tokenize(text))
    for (std::string& t : punkt::nltk_word_tokenizer(s)) out.push_back(std::move(t));
  return out;
}

size_t count_words(std::string_view text) {
  static const detail::Pcre* re = new detail::Pcre("[" LMEVAL_PUNKT_W "]+");
  return re->count(text);
}

}  // namespace lmeval::ifeval

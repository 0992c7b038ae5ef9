// PyRegex: translation of Python `re` syntax to PCRE2 and Python's match/findall/sub/split rules.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lmeval/core/regex.hpp"

#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval {

namespace {

// Python's str.isspace() set, the meaning of `\s` in a Unicode str pattern (PCRE2's UCP \s lacks
// U+001C..U+001F and has U+180E, which Python no longer counts).
constexpr const char* kPySpaceClassBody =
    "\\t-\\r\\x{1c}-\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}"
    "\\x{202f}\\x{205f}\\x{3000}";

bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_octdigit(char32_t c) { return c >= '0' && c <= '7'; }
bool is_hexdigit(char32_t c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hexval(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  return static_cast<int>(c - 'A' + 10);
}

std::string hex(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return out;
}

[[noreturn]] void pattern_error(std::string_view pattern, const std::string& msg, size_t pos) {
  throw UserError("invalid regular expression '" + std::string(pattern) + "': " + msg +
                      " at position " + std::to_string(pos),
                  {}, "a Python `re` pattern");
}

// Rewrites a Python `re` pattern as an equivalent PCRE2 pattern. Python-only or differently
// meant syntax is rewritten; syntax Python rejects but PCRE2 would accept is rejected here, with
// Python's message where practical. Positions are code-point indices into the Python pattern.
class Translator {
 public:
  Translator(std::string_view pattern, unsigned flags)
      : src_(pattern), cps_(unicode::decode(pattern)) {
    verbose_.push_back((flags & PyRegex::VERBOSE) != 0);
    caseless_.push_back((flags & PyRegex::IGNORECASE) != 0);
    ascii_ = (flags & PyRegex::ASCII) != 0;
  }

  std::string run() {
    while (i_ < cps_.size()) step();
    if (in_class_) error("unterminated character set", class_start_);
    if (!groups_open_.empty()) error("missing ), unterminated subpattern", group_starts_.back());
    return out_;
  }

  bool ascii() const { return ascii_; }
  bool verbose_global() const { return verbose_.front(); }
  // Maps a byte offset of the translated pattern back to a code-point position of the source.
  size_t source_pos(size_t out_offset) const {
    if (map_.empty()) return 0;
    if (out_offset >= map_.size()) return cps_.size();
    return map_[out_offset];
  }

 private:
  [[noreturn]] void error(const std::string& msg, size_t pos) { pattern_error(src_, msg, pos); }

  void emit(std::string_view s, size_t src) {
    out_ += s;
    map_.insert(map_.end(), s.size(), src);
  }
  void emit_raw(char32_t c, size_t src) {
    std::string tmp;
    unicode::append_utf8(tmp, c);
    emit(tmp, src);
  }
  void emit_literal(char32_t c, size_t src) { emit("\\x{" + hex(c) + "}", src); }

  char32_t peek(size_t k = 0) const { return i_ + k < cps_.size() ? cps_[i_ + k] : 0; }
  bool has(size_t k = 0) const { return i_ + k < cps_.size(); }

  void step() {
    size_t at = i_;
    char32_t c = cps_[i_];
    if (in_class_) {
      class_char(c, at);
      return;
    }
    // sre rejects a repeat of an anchor (^ $ \A \Z \b \B); PCRE2 accepts some of them.
    bool after_anchor = after_anchor_;
    after_anchor_ = false;
    if (after_anchor && (c == '*' || c == '+' || c == '?' || (c == '{' && brace_is_quantifier())))
      error("nothing to repeat", at);
    if (verbose_.back()) {
      after_anchor_ = after_anchor;  // whitespace and comments do not separate
      // Python's verbose mode skips only these; PCRE2 would also skip some Unicode spaces.
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        emit_raw(c, at);
        ++i_;
        if (flags_only_until_ == at) flags_only_until_ = i_;
        return;
      }
      if (c == '#') {
        while (i_ < cps_.size() && cps_[i_] != '\n') emit_raw(cps_[i_++], at);
        if (flags_only_until_ == at) flags_only_until_ = i_;
        return;
      }
      after_anchor_ = false;
      if (c == 0x85 || c == 0x200e || c == 0x200f || c == 0x2028 || c == 0x2029) {
        emit_literal(c, at);
        ++i_;
        return;
      }
    }
    switch (c) {
      case '\\':
        escape(at);
        return;
      case '[':
        open_class(at);
        return;
      case '(':
        open_group(at);
        return;
      case ')':
        if (groups_open_.empty()) error("unbalanced parenthesis", at);
        groups_open_.pop_back();
        group_starts_.pop_back();
        verbose_.pop_back();
        caseless_.pop_back();
        emit(")", at);
        ++i_;
        return;
      case '{':
        brace(at);
        return;
      case '^':
      case '$':
        after_anchor_ = true;
        emit_raw(c, at);
        ++i_;
        return;
      case 'i':
      case 'I':
        if (caseless_.back() && !ascii_) {
          emit("[iI\\x{130}\\x{131}]", at);  // sre's extra case-insensitive matches of i
          ++i_;
          return;
        }
        emit_raw(c, at);
        ++i_;
        return;
      default:
        if (ascii_ && c >= 0x80) {
          // re.ASCII case-folds ASCII letters only; PCRE2 10.42 would fold this one too.
          emit("(?-i:", at);
          emit_raw(c, at);
          emit(")", at);
        } else {
          emit_raw(c, at);
        }
        ++i_;
        return;
    }
  }

  // Whether the `{` at i_ starts one of Python's quantifier forms.
  bool brace_is_quantifier() const {
    size_t j = i_ + 1;
    if (j < cps_.size() && cps_[j] == '}') return false;
    while (j < cps_.size() && is_digit(cps_[j])) ++j;
    if (j < cps_.size() && cps_[j] == ',') {
      ++j;
      while (j < cps_.size() && is_digit(cps_[j])) ++j;
    }
    return j < cps_.size() && cps_[j] == '}';
  }

  // `{` starts a quantifier only in Python's forms {m}, {m,}, {,n}, {m,n}, {,}; PCRE2 10.42 reads
  // {,n} literally, so quantifiers are written out in full and other braces escaped.
  void brace(size_t at) {
    size_t j = i_ + 1;
    std::string lo, hi;
    bool comma = false;
    if (j < cps_.size() && cps_[j] == '}') {
      emit("\\{", at);
      ++i_;
      return;
    }
    while (j < cps_.size() && is_digit(cps_[j])) lo += static_cast<char>(cps_[j++]);
    if (j < cps_.size() && cps_[j] == ',') {
      comma = true;
      ++j;
      while (j < cps_.size() && is_digit(cps_[j])) hi += static_cast<char>(cps_[j++]);
    }
    if (j >= cps_.size() || cps_[j] != '}') {
      emit("\\{", at);
      ++i_;
      return;
    }
    if (!lo.empty() && !hi.empty() && std::stoull(hi) < std::stoull(lo))
      error("min repeat greater than max repeat", at + 1 + lo.size() + 1);
    std::string q = "{" + (lo.empty() ? std::string("0") : lo);
    if (comma) q += "," + hi;
    q += "}";
    emit(q, at);
    i_ = j + 1;
  }

  void open_group(size_t at) {
    ++i_;
    int capture = 0;
    bool verbose = verbose_.back();
    if (peek() == '*') error("nothing to repeat", i_);
    if (peek() != '?') {
      capture = ++group_count_;
      emit("(", at);
    } else {
      ++i_;  // past '?'
      char32_t c = peek();
      if (c == ':' || c == '=' || c == '!' || c == '>') {
        std::string s = "(?";
        unicode::append_utf8(s, c);
        emit(s, at);
        ++i_;
      } else if (c == '<' && (peek(1) == '=' || peek(1) == '!')) {
        std::string s = "(?<";
        unicode::append_utf8(s, peek(1));
        emit(s, at);
        i_ += 2;
      } else if (c == 'P' && peek(1) == '<') {
        i_ += 2;
        std::string name = read_name('>', at);
        if (groupindex_.count(name)) error("redefinition of group name '" + name + "'", at + 4);
        capture = ++group_count_;
        groupindex_[name] = capture;
        emit("(?P<" + name + ">", at);
      } else if (c == 'P' && peek(1) == '=') {
        i_ += 2;
        std::string name = read_name(')', at);
        auto it = groupindex_.find(name);
        if (it == groupindex_.end()) error("unknown group name '" + name + "'", at + 4);
        check_open(it->second, at);
        emit("(?P=" + name + ")", at);
        return;  // not a group: nothing pushed
      } else if (c == '#') {
        // Comment: Python ends it at the first ')'.
        while (has() && peek() != ')') ++i_;
        if (!has()) error("missing ), unterminated comment", at);
        ++i_;
        return;
      } else if (c == '(') {
        // Conditional (?(id/name)yes|no): copy the condition.
        size_t j = i_ + 1;
        std::string cond;
        while (j < cps_.size() && cps_[j] != ')') unicode::append_utf8(cond, cps_[j++]);
        if (j >= cps_.size()) error("missing ), unterminated name", i_ + 1);
        bool numeric = !cond.empty();
        for (char ch : cond) numeric = numeric && ch >= '0' && ch <= '9';
        if (numeric) {
          // A later group may be named (checked by PCRE2 at the end, as sre does).
          if (cond.size() > 9 || std::stoi(cond) == 0) error("bad group number", i_ + 1);
        } else if (!groupindex_.count(cond)) {
          error("unknown group name '" + cond + "'", i_ + 1);
        }
        emit("(?(" + cond + ")", at);
        i_ = j + 1;
      } else if (c == '-' || c == 'a' || c == 'i' || c == 'L' || c == 'm' || c == 's' || c == 'u' ||
                 c == 'x') {
        flag_group(at, verbose);
        return;
      } else {
        std::string s = "?";
        if (has()) unicode::append_utf8(s, c);
        error("unknown extension " + s, at + 1);
      }
    }
    groups_open_.push_back(capture);
    group_starts_.push_back(at);
    verbose_.push_back(verbose);
    caseless_.push_back(caseless_.back());
  }

  // (?aiLmsux) global flags, (?aiLmsux-imsx:...) scoped flags. `a`/`u`/`L` have no PCRE2 spelling:
  // `a` switches off UCP for the whole pattern, `u` is the default, `L` is invalid for str.
  void flag_group(size_t at, bool verbose) {
    bool caseless = caseless_.back();
    std::string on, off;
    bool minus = false;
    while (has() && peek() != ')' && peek() != ':') {
      char32_t c = peek();
      if (c == '-') {
        if (minus) error("bad inline flag", i_);
        minus = true;
      } else if (c == 'a') {
        if (minus) error("bad inline flag: cannot turn off flags 'a', 'u' and 'L'", i_);
        ascii_ = true;
      } else if (c == 'u') {
        if (minus) error("bad inline flag: cannot turn off flags 'a', 'u' and 'L'", i_);
      } else if (c == 'L') {
        error("bad inline flag: cannot use 'L' flag with a str pattern", i_);
      } else if (c == 'i' || c == 'm' || c == 's' || c == 'x') {
        (minus ? off : on) += static_cast<char>(c);
        if (c == 'x') verbose = !minus;
        if (c == 'i') caseless = !minus;
      } else {
        error("unknown flag", i_);
      }
      ++i_;
    }
    if (!has()) error("missing -, : or )", i_);
    if (peek() == ')') {
      if (minus) error("missing :", i_);
      // A global flag group; Python >= 3.11 only allows it at the start.
      if (at != flags_only_until_ || !groups_open_.empty())
        error("global flags not at the start of the expression", at);
      ++i_;
      flags_only_until_ = i_;
      if (!on.empty()) emit("(?" + on + ")", at);
      verbose_.back() = verbose;
      caseless_.back() = caseless;
      return;
    }
    ++i_;  // ':'
    std::string s = "(?" + on;
    if (!off.empty()) s += "-" + off;
    emit(s + ":", at);
    groups_open_.push_back(0);
    group_starts_.push_back(at);
    verbose_.push_back(verbose);
    caseless_.push_back(caseless);
  }

  std::string read_name(char32_t terminator, size_t at) {
    std::string name;
    size_t start = i_;
    while (has() && peek() != terminator) unicode::append_utf8(name, cps_[i_++]);
    if (!has())
      error("missing " + std::string(1, static_cast<char>(terminator)) + ", unterminated name",
            start);
    ++i_;
    if (name.empty()) error("missing group name", start);
    bool ok = !is_digit(static_cast<char32_t>(static_cast<unsigned char>(name[0])));
    for (unsigned char ch : name) ok = ok && (ch >= 0x80 || std::isalnum(ch) || ch == '_');
    if (!ok) error("bad character in group name '" + name + "'", start);
    return name;
  }

  void check_open(int group, size_t at) {
    for (int g : groups_open_)
      if (g == group) error("cannot refer to an open group", at);
  }

  void open_class(size_t at) {
    in_class_ = true;
    class_start_ = at;
    emit("[", at);
    ++i_;
    if (peek() == '^') {
      emit("^", i_);
      ++i_;
    }
    class_body_at_ = out_.size();
    class_has_i_ = false;
    class_prev_ = 0;
    class_dash_ = false;
    if (peek() == ']') {  // a leading ']' is literal
      emit("\\]", i_);
      class_literal(']');
      ++i_;
    }
  }

  void class_literal(char32_t c) {
    if (c == 'i' || c == 'I') class_has_i_ = true;
    if (class_dash_ && class_prev_ && class_prev_ <= c &&
        ((class_prev_ <= 'i' && 'i' <= c) || (class_prev_ <= 'I' && 'I' <= c)))
      class_has_i_ = true;
    class_dash_ = false;
    class_prev_ = c;
  }

  void class_char(char32_t c, size_t at) {
    if (c == ']') {
      in_class_ = false;
      if (class_has_i_ && caseless_.back() && !ascii_) {
        // sre folds i/I with U+0130 and U+0131 under IGNORECASE; PCRE2 does not.
        const std::string extra = "\\x{130}\\x{131}";
        out_.insert(class_body_at_, extra);
        map_.insert(map_.begin() + static_cast<long>(class_body_at_), extra.size(), at);
      }
      emit("]", at);
      ++i_;
    } else if (c == '\\') {
      class_prev_ = 0;
      class_dash_ = false;
      class_escape(at);
    } else if (c == '[') {
      emit("\\[", at);  // never a PCRE2 POSIX class like [:alpha:]
      class_literal('[');
      ++i_;
    } else {
      emit_raw(c, at);
      if (c == '-' && class_prev_ && !class_dash_)
        class_dash_ = true;
      else
        class_literal(c);
      ++i_;
    }
  }

  // Escapes that mean one character in both contexts; returns true when handled.
  bool char_escape(char32_t c, size_t at) {
    switch (c) {
      case 'a':
        emit_literal(7, at);
        break;
      case 'f':
        emit_literal(12, at);
        break;
      case 'n':
        emit_literal(10, at);
        break;
      case 'r':
        emit_literal(13, at);
        break;
      case 't':
        emit_literal(9, at);
        break;
      case 'v':  // PCRE2's \v is a class (vertical space)
        emit_literal(11, at);
        break;
      case 'x':
      case 'u':
      case 'U': {
        size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        uint32_t v = 0;
        size_t k = 0;
        while (k < n && has(2 + k) && is_hexdigit(peek(2 + k))) v = v * 16 + hexval(peek(2 + k++));
        if (k != n) {
          std::string s = "\\";
          unicode::append_utf8(s, c);
          error("incomplete escape " + s, at);
        }
        if (v > 0x10FFFF) error("bad escape \\U", at);
        emit_literal(v, at);
        i_ += 2 + n;
        return true;
      }
      case 'N':
        error("named Unicode escapes (\\N{...}) are not supported", at);
      default:
        return false;
    }
    i_ += 2;
    return true;
  }

  void escape(size_t at) {
    if (!has(1)) error("bad escape (end of pattern)", at);
    char32_t c = peek(1);
    if (char_escape(c, at)) return;
    switch (c) {
      case 'B':
        // sre's \B never matches in an empty string.
        emit("(?:\\B(?!\\A\\z))", at);
        after_anchor_ = true;
        i_ += 2;
        return;
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        if (ascii_) {  // PCRE2 10.42 without UCP misses non-ASCII letters in \D and \W
          std::string body = (c == 'd' || c == 'D') ? "0-9" : "A-Za-z0-9_";
          emit((c == 'd' || c == 'w') ? "[" + body + "]" : "[^" + body + "]", at);
          i_ += 2;
          return;
        }
        [[fallthrough]];
      case 'A':
      case 'b': {
        std::string s = "\\";
        s += static_cast<char>(c);
        emit(s, at);
        after_anchor_ = c == 'A' || c == 'b';
        i_ += 2;
        return;
      }
      case 'Z':
        emit("\\z", at);  // Python's \Z is the very end; PCRE2's \Z allows a final newline
        after_anchor_ = true;
        i_ += 2;
        return;
      case 's':
        emit(ascii_ ? std::string("[\\t-\\r ]") : std::string("[") + kPySpaceClassBody + "]", at);
        i_ += 2;
        return;
      case 'S':
        emit(ascii_ ? std::string("[^\\t-\\r ]") : std::string("[^") + kPySpaceClassBody + "]", at);
        i_ += 2;
        return;
      default:
        break;
    }
    if (c == '0') {
      uint32_t v = 0;
      size_t k = 2;
      while (k < 4 && has(k) && is_octdigit(peek(k))) v = v * 8 + (peek(k++) - '0');
      emit_literal(v, at);
      i_ += k;
      return;
    }
    if (is_digit(c)) {
      // Octal escape (three octal digits) or a group reference of one or two digits.
      if (has(2) && is_digit(peek(2))) {
        if (is_octdigit(c) && is_octdigit(peek(2)) && has(3) && is_octdigit(peek(3))) {
          uint32_t v = (c - '0') * 64 + (peek(2) - '0') * 8 + (peek(3) - '0');
          if (v > 0377)
            error("octal escape value \\" + std::to_string(c - '0') +
                      std::to_string(peek(2) - '0') + std::to_string(peek(3) - '0') +
                      " outside of range 0-0o377",
                  at);
          emit_literal(v, at);
          i_ += 4;
          return;
        }
        int g = (c - '0') * 10 + (peek(2) - '0');
        ref(g, at, 3);
        return;
      }
      ref(c - '0', at, 2);
      return;
    }
    if (is_ascii_letter(c)) bad_escape(c, at);
    escaped_literal(c, at);
  }

  // "\x" with x ASCII: an unknown letter (or digit in a set) is sre's "bad escape".
  [[noreturn]] void bad_escape(char32_t c, size_t at) {
    std::string s = "\\";
    s += static_cast<char>(c);
    error("bad escape " + s, at);
  }

  // Any other escaped character stands for itself: printable ASCII keeps its backslash (PCRE2
  // reads an escaped non-alphanumeric as itself, also where it would be special in a set), the
  // rest is emitted as a literal.
  void escaped_literal(char32_t c, size_t at) {
    if (c < 0x80 && c > 0x20 && c != 0x7f) {
      std::string s = "\\";
      s += static_cast<char>(c);
      emit(s, at);
    } else {
      emit_literal(c, at);
    }
    i_ += 2;
  }

  void ref(int group, size_t at, size_t len) {
    if (group > group_count_) error("invalid group reference " + std::to_string(group), at + 1);
    check_open(group, at);
    emit("\\g{" + std::to_string(group) + "}", at);
    i_ += len;
  }

  void class_escape(size_t at) {
    if (!has(1)) error("bad escape (end of pattern)", at);
    char32_t c = peek(1);
    if (char_escape(c, at)) return;
    switch (c) {
      case 'b':
        emit_literal(8, at);
        i_ += 2;
        return;
      case 'd':
      case 'w':
        if (ascii_) {
          emit(c == 'd' ? "0-9" : "A-Za-z0-9_", at);
          i_ += 2;
          return;
        }
        [[fallthrough]];
      case 'D':
      case 'W':
      case 'S': {
        // \S inside a set keeps PCRE2's meaning (differs from Python only on U+001C..U+001F and
        // U+180E).
        std::string s = "\\";
        s += static_cast<char>(c);
        emit(s, at);
        i_ += 2;
        return;
      }
      case 's':
        emit(ascii_ ? std::string("\\t-\\r ") : std::string(kPySpaceClassBody), at);
        i_ += 2;
        return;
      default:
        break;
    }
    if (is_octdigit(c)) {
      uint32_t v = 0;
      size_t k = 1;
      while (k < 4 && has(k) && is_octdigit(peek(k))) v = v * 8 + (peek(k++) - '0');
      if (v > 0377) error("octal escape value outside of range 0-0o377", at);
      emit_literal(v, at);
      i_ += k;
      return;
    }
    if (is_digit(c) || is_ascii_letter(c)) bad_escape(c, at);
    escaped_literal(c, at);
  }

  std::string_view src_;
  std::u32string cps_;
  size_t i_ = 0;
  std::string out_;
  std::vector<size_t> map_;
  bool in_class_ = false;
  size_t flags_only_until_ = 0;  // the source up to here holds only global flag groups
  bool after_anchor_ = false;    // the last item was an anchor, which cannot be repeated
  size_t class_start_ = 0;
  bool ascii_ = false;
  std::vector<bool> verbose_;
  std::vector<bool> caseless_;  // IGNORECASE in effect (flags, (?i), (?i:...))
  // Classes under IGNORECASE that contain i/I also get U+0130 and U+0131, as in sre.
  size_t class_body_at_ = 0;  // byte offset in out_ just after "[" or "[^"
  bool class_has_i_ = false;
  char32_t class_prev_ = 0;  // last literal of the class (0: none)
  bool class_dash_ = false;  // a '-' followed class_prev_: the next literal ends a range
  int group_count_ = 0;
  std::vector<int> groups_open_;  // capture number, 0 for non-capturing
  std::vector<size_t> group_starts_;
  std::map<std::string, int> groupindex_;
};

// Per-thread match data, grown as needed (pcre2_match_data is not shareable between threads).
struct MatchData {
  pcre2_match_data* md = nullptr;
  uint32_t pairs = 0;
  ~MatchData() {
    if (md) pcre2_match_data_free(md);
  }
  pcre2_match_data* get(uint32_t need) {
    if (need > pairs) {
      if (md) pcre2_match_data_free(md);
      pairs = std::max<uint32_t>(need, 16);
      md = pcre2_match_data_create(pairs, nullptr);
      if (!md) throw RuntimeError("out of memory allocating regex match data");
    }
    return md;
  }
};

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof(buf));
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// A parsed replacement template: literal pieces and group references (Python parse_template).
struct TemplatePiece {
  std::string literal;
  int group = -1;  // >= 0: a group reference
};

std::vector<TemplatePiece> parse_template(std::string_view repl, size_t groups,
                                          const std::map<std::string, int>& groupindex) {
  std::vector<TemplatePiece> pieces;
  std::string lit;
  auto flush = [&] {
    if (!lit.empty()) pieces.push_back({std::move(lit), -1});
    lit.clear();
  };
  auto bad = [&](const std::string& msg, size_t pos) -> void {
    throw UserError("invalid replacement template '" + std::string(repl) + "': " + msg +
                        " at position " + std::to_string(pos),
                    {}, "a Python re.sub template");
  };
  std::u32string cps = unicode::decode(repl);
  auto add_group = [&](long long index, size_t pos) {
    if (index > static_cast<long long>(groups))
      bad("invalid group reference " + std::to_string(index), pos);
    flush();
    pieces.push_back({"", static_cast<int>(index)});
  };
  size_t i = 0;
  while (i < cps.size()) {
    char32_t c = cps[i];
    if (c != '\\') {
      unicode::append_utf8(lit, c);
      ++i;
      continue;
    }
    if (i + 1 >= cps.size()) bad("bad escape (end of pattern)", i);
    char32_t e = cps[i + 1];
    size_t at = i;
    i += 2;
    if (e == 'g') {
      if (i >= cps.size() || cps[i] != '<') bad("missing <", i);
      ++i;
      std::string name;
      size_t start = i;
      while (i < cps.size() && cps[i] != '>') unicode::append_utf8(name, cps[i++]);
      if (i >= cps.size()) bad("missing >, unterminated name", start);
      ++i;
      if (name.empty()) bad("missing group name", start);
      bool digits = true;
      for (char ch : name) digits = digits && ch >= '0' && ch <= '9';
      if (digits) {
        if (name.size() > 9) bad("invalid group reference " + name, start);
        add_group(std::stoll(name), start);
      } else {
        auto it = groupindex.find(name);
        if (it == groupindex.end()) bad("unknown group name '" + name + "'", start);
        add_group(it->second, start);
      }
    } else if (e == '0') {
      uint32_t v = 0;
      size_t k = 0;
      while (k < 2 && i < cps.size() && is_octdigit(cps[i])) v = v * 8 + (cps[i++] - '0'), ++k;
      unicode::append_utf8(lit, v & 0xff);
    } else if (is_digit(e)) {
      if (i < cps.size() && is_digit(cps[i])) {
        char32_t d2 = cps[i];
        if (is_octdigit(e) && is_octdigit(d2) && i + 1 < cps.size() && is_octdigit(cps[i + 1])) {
          uint32_t v = (e - '0') * 64 + (d2 - '0') * 8 + (cps[i + 1] - '0');
          if (v > 0377) bad("octal escape value outside of range 0-0o377", at);
          unicode::append_utf8(lit, v);
          i += 2;
          continue;
        }
        ++i;
        add_group((e - '0') * 10 + (d2 - '0'), at + 1);
      } else {
        add_group(e - '0', at + 1);
      }
    } else {
      switch (e) {
        case 'a':
          lit += '\a';
          break;
        case 'b':
          lit += '\b';
          break;
        case 'f':
          lit += '\f';
          break;
        case 'n':
          lit += '\n';
          break;
        case 'r':
          lit += '\r';
          break;
        case 't':
          lit += '\t';
          break;
        case 'v':
          lit += '\v';
          break;
        case '\\':
          lit += '\\';
          break;
        default:
          if (is_ascii_letter(e)) {
            std::string s = "\\";
            s += static_cast<char>(e);
            bad("bad escape " + s, at);
          }
          lit += '\\';  // unknown non-letter escapes stay as written
          unicode::append_utf8(lit, e);
      }
    }
  }
  flush();
  return pieces;
}

}  // namespace

struct PyRegex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

std::optional<std::string_view> PyMatch::group(size_t i) const {
  const auto& sp = spans_.at(i);
  if (sp.first == npos) return std::nullopt;
  return subject_.substr(sp.first, sp.second - sp.first);
}

std::optional<std::string_view> PyMatch::group(const std::string& name) const {
  if (!groupindex_) throw std::out_of_range("no such group: " + name);
  auto it = groupindex_->find(name);
  if (it == groupindex_->end()) throw std::out_of_range("no such group: " + name);
  return group(static_cast<size_t>(it->second));
}

std::string_view PyMatch::group_or_empty(size_t i) const {
  auto g = group(i);
  return g ? *g : std::string_view();
}

PyRegex::PyRegex(std::string_view pattern, unsigned flags)
    : pattern_(pattern), flags_(flags), impl_(std::make_unique<Impl>()) {
  Translator tr(pattern, flags);
  translated_ = tr.run();
  uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_CIRCUMFLEX;
  if (!tr.ascii()) options |= PCRE2_UCP;
  if (flags & IGNORECASE) options |= PCRE2_CASELESS;
  if (flags & MULTILINE) options |= PCRE2_MULTILINE;
  if (flags & DOTALL) options |= PCRE2_DOTALL;
  if (flags & VERBOSE) options |= PCRE2_EXTENDED;
  pcre2_compile_context* ctx = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(ctx, PCRE2_NEWLINE_LF);
  int errcode = 0;
  PCRE2_SIZE erroffset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated_.data()), translated_.size(),
                              options, &errcode, &erroffset, ctx);
  pcre2_compile_context_free(ctx);
  if (!impl_->code) pattern_error(pattern_, pcre2_message(errcode), tr.source_pos(erroffset));
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if absent
  uint32_t count = 0;
  pcre2_pattern_info(impl_->code, PCRE2_INFO_CAPTURECOUNT, &count);
  groups_ = count;
  auto index = std::make_shared<std::map<std::string, int>>();
  uint32_t namecount = 0, entry = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(impl_->code, PCRE2_INFO_NAMECOUNT, &namecount);
  pcre2_pattern_info(impl_->code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(impl_->code, PCRE2_INFO_NAMETABLE, &table);
  for (uint32_t k = 0; k < namecount; ++k) {
    const unsigned char* e = table + static_cast<size_t>(k) * entry;
    int num = (e[0] << 8) | e[1];
    (*index)[std::string(reinterpret_cast<const char*>(e + 2))] = num;
  }
  groupindex_ = std::move(index);
}

PyRegex::~PyRegex() = default;

std::shared_ptr<const PyRegex> PyRegex::compile(std::string_view pattern, unsigned flags) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const PyRegex>> cache;
  std::string key = std::to_string(flags);
  key += '\0';
  key += pattern;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto re = std::make_shared<const PyRegex>(pattern, flags);  // compile outside the lock
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 4096) cache.clear();
  return cache.emplace(std::move(key), re).first->second;
}

bool PyRegex::match_at(std::string_view s, size_t pos, unsigned options,
                       std::vector<std::pair<size_t, size_t>>& spans) const {
  thread_local MatchData data;
  pcre2_match_data* md = data.get(static_cast<uint32_t>(groups_ + 1));
  static const char kEmpty[] = "";
  PCRE2_SPTR subject = reinterpret_cast<PCRE2_SPTR>(s.data() ? s.data() : kEmpty);
  int rc = pcre2_match(impl_->code, subject, s.size(), pos, options, md, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(impl_->code, subject, s.size(), pos, options | PCRE2_NO_JIT, md, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0)
    throw RuntimeError("regular expression '" + pattern_ + "' failed: " + pcre2_message(rc));
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
  spans.assign(groups_ + 1, {PyMatch::npos, PyMatch::npos});
  for (size_t g = 0; g <= groups_ && g < static_cast<size_t>(rc); ++g) {
    if (ov[2 * g] == PCRE2_UNSET) continue;
    spans[g] = {ov[2 * g], ov[2 * g + 1]};
  }
  return true;
}

std::optional<PyMatch> PyRegex::search(std::string_view s, size_t pos) const {
  std::vector<std::pair<size_t, size_t>> spans;
  if (pos > s.size() || !match_at(s, pos, 0, spans)) return std::nullopt;
  return PyMatch(s, std::move(spans), groupindex_);
}

std::optional<PyMatch> PyRegex::match(std::string_view s, size_t pos) const {
  std::vector<std::pair<size_t, size_t>> spans;
  if (pos > s.size() || !match_at(s, pos, PCRE2_ANCHORED, spans)) return std::nullopt;
  return PyMatch(s, std::move(spans), groupindex_);
}

std::optional<PyMatch> PyRegex::fullmatch(std::string_view s, size_t pos) const {
  std::vector<std::pair<size_t, size_t>> spans;
  if (pos > s.size() || !match_at(s, pos, PCRE2_ANCHORED | PCRE2_ENDANCHORED, spans))
    return std::nullopt;
  return PyMatch(s, std::move(spans), groupindex_);
}

std::vector<PyMatch> PyRegex::finditer(std::string_view s) const {
  std::vector<PyMatch> out;
  size_t pos = 0;
  bool must_advance = false;  // sre's must_advance: the last match was empty and ended here
  std::vector<std::pair<size_t, size_t>> spans;
  while (pos <= s.size()) {
    if (!match_at(s, pos, must_advance ? PCRE2_NOTEMPTY_ATSTART : 0, spans)) break;
    must_advance = spans[0].first == spans[0].second;
    pos = spans[0].second;
    out.emplace_back(s, spans, groupindex_);
  }
  return out;
}

nlohmann::ordered_json PyRegex::findall(std::string_view s) const {
  auto out = nlohmann::ordered_json::array();
  for (const PyMatch& m : finditer(s)) {
    if (groups_ == 0) {
      out.push_back(std::string(m.group_or_empty(0)));
    } else if (groups_ == 1) {
      out.push_back(std::string(m.group_or_empty(1)));
    } else {
      auto t = nlohmann::ordered_json::array();
      for (size_t g = 1; g <= groups_; ++g) t.push_back(std::string(m.group_or_empty(g)));
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::pair<std::string, size_t> PyRegex::subn(std::string_view repl, std::string_view s,
                                             size_t count) const {
  std::vector<TemplatePiece> pieces = parse_template(repl, groups_, *groupindex_);
  std::string out;
  size_t last = 0, n = 0;
  for (const PyMatch& m : finditer(s)) {
    if (count && n >= count) break;
    out.append(s.substr(last, m.start() - last));
    for (const auto& p : pieces) {
      if (p.group < 0)
        out += p.literal;
      else
        out.append(m.group_or_empty(static_cast<size_t>(p.group)));
    }
    last = m.end();
    ++n;
  }
  out.append(s.substr(last));
  return {std::move(out), n};
}

std::string PyRegex::sub(std::string_view repl, std::string_view s, size_t count) const {
  return subn(repl, s, count).first;
}

std::string PyRegex::sub(const std::function<std::string(const PyMatch&)>& repl, std::string_view s,
                         size_t count) const {
  std::string out;
  size_t last = 0, n = 0;
  for (const PyMatch& m : finditer(s)) {
    if (count && n >= count) break;
    out.append(s.substr(last, m.start() - last));
    out += repl(m);
    last = m.end();
    ++n;
  }
  out.append(s.substr(last));
  return out;
}

std::vector<std::optional<std::string>> PyRegex::split(std::string_view s, size_t maxsplit) const {
  std::vector<std::optional<std::string>> out;
  size_t last = 0, n = 0;
  for (const PyMatch& m : finditer(s)) {
    if (maxsplit && n >= maxsplit) break;
    out.emplace_back(std::string(s.substr(last, m.start() - last)));
    for (size_t g = 1; g <= groups_; ++g) {
      auto t = m.group(g);
      out.push_back(t ? std::optional<std::string>(std::string(*t)) : std::nullopt);
    }
    last = m.end();
    ++n;
  }
  out.emplace_back(std::string(s.substr(last)));
  return out;
}

std::string py_re_escape(std::string_view s) {
  static const std::string_view special = "()[]{}?*+-|^$\\.&~# \t\n\r\v\f";
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) {
    if (c != '\0' && special.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace lmeval

// PCRE2 wrapper: translates Oniguruma's \s (Unicode White_Space, which includes U+0085) and runs
// JIT-compiled searches.
#include "tokenizer/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

#include "tokenizer/onig_extras.inc"

// Oniguruma's \s (what HF runs) is Unicode White_Space; PCRE2's UCP \s also holds U+180E and
// lacks U+0085. Spelled out, so both engines agree.
constexpr const char* kWhiteSpace =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

// Rewrites \s, \S, \p{L} and \p{N} so that PCRE2 (Unicode 14 tables) classifies characters as the
// library's newer Oniguruma does: the letters and numbers Unicode added since are appended.
std::string translate(const std::string& p) {
  std::string out;
  out.reserve(p.size() + 64);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[i + 1];
      std::string_view rest(p.data() + i, p.size() - i);
      if (n == 's') {
        out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      } else if (n == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpace) + "]";
      } else if (rest.substr(0, 5) == "\\p{L}" || rest.substr(0, 5) == "\\p{N}") {
        std::string cls = std::string(rest.substr(0, 5)) +
                          (n == 'p' && p[i + 3] == 'L' ? kOnigExtraL : kOnigExtraN);
        out += in_class ? cls : "[" + cls + "]";
        i += 3;
      } else {
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      if (i + 1 < p.size() && p[i + 1] == ']') {
        out += ']';
        ++i;
      }
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct MatchData {
  pcre2_match_data* md = nullptr;
  ~MatchData() {
    if (md) pcre2_match_data_free(md);
  }
};

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern) {
  std::string translated = translate(pattern);
  int err = 0;
  PCRE2_SIZE off = 0;
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    throw std::invalid_argument("invalid regex /" + pattern +
                                "/: " + reinterpret_cast<const char*>(buf) + " at offset " +
                                std::to_string(off));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ = code;
}

Regex::~Regex() {
  if (code_) pcre2_code_free(static_cast<pcre2_code*>(code_));
}

void Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  auto* code = static_cast<pcre2_code*>(code_);
  thread_local MatchData data;
  if (!data.md) data.md = pcre2_match_data_create(32, nullptr);
  auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos <= text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, data.md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("regex match failed for /" + pattern_ + "/");
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.md);
    size_t s = ov[0], e = ov[1];
    out.emplace_back(s, e);
    if (e > s) {
      pos = e;
    } else {
      if (e >= text.size()) break;
      pos = e + utf8_len(static_cast<unsigned char>(text[e]));
    }
  }
}

std::string regex_escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-#&~ \t\n").find(c) != std::string_view::npos &&
        c != ' ' && c != '\t' && c != '\n') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

}  // namespace lmeval::tok

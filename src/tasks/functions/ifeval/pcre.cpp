// Private PCRE2 wrapper and Python character predicates for the IFEval helpers.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tasks/functions/ifeval/pcre.hpp"

#include <pcre2.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::ifeval::detail {

Pcre::Pcre(std::string_view pattern, uint32_t extra_options) {
  pcre2_compile_context* ctx = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(ctx, PCRE2_NEWLINE_LF);
  int err = 0;
  PCRE2_SIZE off = 0;
  code_ =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_ALT_CIRCUMFLEX | extra_options, &err, &off, ctx);
  pcre2_compile_context_free(ctx);
  if (!code_) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    throw RuntimeError("ifeval: internal regex failed to compile: " + std::string(pattern) + ": " +
                       reinterpret_cast<const char*>(buf));
  }
  pcre2_jit_compile(static_cast<pcre2_code*>(code_), PCRE2_JIT_COMPLETE);
}

Pcre::~Pcre() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

namespace {
// One match-data block reused across the calls of a search loop (PCRE2 keeps its backtracking
// frames there, so a fresh block per call costs an allocation each time).
struct MatchData {
  explicit MatchData(const pcre2_code* code)
      : md(pcre2_match_data_create_from_pattern(code, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(md); }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;
  pcre2_match_data* md;
};

std::optional<Spans> run_match(const pcre2_code* code, pcre2_match_data* md, std::string_view s,
                               size_t pos, uint32_t opts) {
  int rc =
      pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos, opts, md, nullptr);
  if (rc < 0) {
    if (rc == PCRE2_ERROR_NOMATCH) return std::nullopt;
    throw RuntimeError("ifeval: regex match failed (invalid UTF-8 or resource limit)");
  }
  uint32_t n = pcre2_get_ovector_count(md);
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
  uint32_t groups = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
  Spans spans(groups + 1, {Pcre::npos, Pcre::npos});
  for (size_t i = 0; i < n && i <= groups; ++i) {
    if (ov[2 * i] == PCRE2_UNSET) continue;
    spans[i] = {ov[2 * i], ov[2 * i + 1]};
  }
  return spans;
}
}  // namespace

std::optional<Spans> Pcre::search(std::string_view s, size_t pos, bool anchored,
                                  bool notempty_atstart) const {
  auto* code = static_cast<pcre2_code*>(code_);
  MatchData md(code);
  uint32_t opts = (anchored ? PCRE2_ANCHORED : 0) | (notempty_atstart ? PCRE2_NOTEMPTY_ATSTART : 0);
  return run_match(code, md.md, s, pos, opts);
}

std::vector<Spans> Pcre::finditer(std::string_view s) const {
  auto* code = static_cast<pcre2_code*>(code_);
  MatchData md(code);
  std::vector<Spans> out;
  size_t pos = 0;
  bool must_advance = false;
  while (pos <= s.size()) {
    // The subject is UTF-8-checked by the first call only (PCRE2 would re-check it every time).
    uint32_t opts =
        (must_advance ? PCRE2_NOTEMPTY_ATSTART : 0) | (out.empty() ? 0 : PCRE2_NO_UTF_CHECK);
    auto m = run_match(code, md.md, s, pos, opts);
    if (!m) break;
    auto [b, e] = (*m)[0];
    out.push_back(std::move(*m));
    must_advance = (b == e);
    pos = e;
  }
  return out;
}

std::string Pcre::sub(std::string_view s, std::string_view repl) const {
  std::string out;
  size_t last = 0;
  for (const Spans& m : finditer(s)) {
    out.append(s.substr(last, m[0].first - last));
    for (size_t i = 0; i < repl.size(); ++i) {
      char c = repl[i];
      if (c == '\\' && i + 1 < repl.size()) {
        size_t g = 0;
        size_t j = i + 1;
        if (repl[j] == 'g' && j + 1 < repl.size() && repl[j + 1] == '<') {
          size_t close = repl.find('>', j);
          g = std::stoul(std::string(repl.substr(j + 2, close - j - 2)));
          i = close;
        } else if (repl[j] >= '0' && repl[j] <= '9') {
          g = static_cast<size_t>(repl[j] - '0');
          i = j;
        } else {
          out += repl[j];
          i = j;
          continue;
        }
        if (g < m.size() && m[g].first != npos)
          out.append(s.substr(m[g].first, m[g].second - m[g].first));
        continue;
      }
      out += c;
    }
    last = m[0].second;
  }
  out.append(s.substr(last));
  return out;
}

namespace {
struct ClassCache {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Pcre>> classes;
  std::map<std::string, std::unordered_map<char32_t, bool>> memo;
};
ClassCache& class_cache() {
  static ClassCache* c = new ClassCache();
  return *c;
}
}  // namespace

bool char_in_class(char32_t c, const char* cls) {
  ClassCache& cache = class_cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto& memo = cache.memo[cls];
  auto it = memo.find(c);
  if (it != memo.end()) return it->second;
  auto& re = cache.classes[cls];
  if (!re) re = std::make_unique<Pcre>(std::string("^") + cls + "$");
  std::string s;
  unicode::append_utf8(s, c);
  bool r = re->search(s).has_value();
  memo.emplace(c, r);
  return r;
}

bool py_char_isupper(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  return char_in_class(c, "\\p{Uppercase}");
}
bool py_char_islower(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  return char_in_class(c, "\\p{Lowercase}");
}
bool py_char_istitle(char32_t c) {
  if (c < 0x80) return false;
  return char_in_class(c, "\\p{Lt}");
}

}  // namespace lmeval::ifeval::detail

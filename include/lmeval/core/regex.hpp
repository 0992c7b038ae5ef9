// PyRegex: Python `re` semantics (syntax, Unicode classes, findall/sub/split rules) over PCRE2.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmeval {

// One match of a PyRegex. Offsets are byte offsets into the subject, which the match views:
// keep the subject alive while using the match.
class PyMatch {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  PyMatch(std::string_view subject, std::vector<std::pair<size_t, size_t>> spans,
          std::shared_ptr<const std::map<std::string, int>> groupindex)
      : subject_(subject), spans_(std::move(spans)), groupindex_(std::move(groupindex)) {}

  // Number of capture groups (not counting group 0), like Pattern.groups.
  size_t groups() const { return spans_.size() - 1; }
  // Group text, or nullopt when the group did not take part (Python None).
  std::optional<std::string_view> group(size_t i = 0) const;
  std::optional<std::string_view> group(const std::string& name) const;
  // Group text, "" when the group did not take part (Python's findall/sub convention).
  std::string_view group_or_empty(size_t i) const;
  size_t start(size_t i = 0) const { return spans_.at(i).first; }
  size_t end(size_t i = 0) const { return spans_.at(i).second; }
  std::string_view subject() const { return subject_; }

 private:
  std::string_view subject_;
  std::vector<std::pair<size_t, size_t>> spans_;  // npos,npos for groups that did not match
  std::shared_ptr<const std::map<std::string, int>> groupindex_;
};

// A compiled Python `re` pattern. Patterns are Python syntax (str patterns: Unicode-aware
// \d \w \s \b, `\Z` end of string, `(?P<name>)`, `(?P=name)`, Python's escapes and quantifier
// rules); they are translated to PCRE2 (UTF + UCP, JIT when available). Thread-safe after
// construction: all methods are const and allocate their own match state.
//
// Known differences from CPython 3.11 (none seen in task patterns): capture values inside
// possessive/atomic repeats and inside counted repeats of groups that can match empty may differ
// (sre and PCRE2 backtrack captures differently); `\N{...}` is rejected; `\S` inside a set keeps
// PCRE2's meaning (differs on U+001C..U+001F, U+180E); with re.ASCII, sets still case-fold
// non-ASCII letters under IGNORECASE. A match exceeding PCRE2's match limit throws RuntimeError
// (where Python would keep backtracking).
class PyRegex {
 public:
  // Python's flag values (re.IGNORECASE == 2, ...), so they can be passed through verbatim.
  enum Flag : unsigned {
    NOFLAG = 0,
    IGNORECASE = 2,
    MULTILINE = 8,
    DOTALL = 16,
    VERBOSE = 64,
    ASCII = 256,
  };

  // Compiles; an invalid pattern throws lmeval::UserError naming the pattern and the (code point)
  // position of the error, like Python's re.error.
  explicit PyRegex(std::string_view pattern, unsigned flags = NOFLAG);
  ~PyRegex();
  PyRegex(const PyRegex&) = delete;
  PyRegex& operator=(const PyRegex&) = delete;

  // The shared compiled pattern for (pattern, flags), from a thread-safe cache (re's _cache).
  static std::shared_ptr<const PyRegex> compile(std::string_view pattern, unsigned flags = NOFLAG);

  const std::string& pattern() const { return pattern_; }
  unsigned flags() const { return flags_; }
  // The PCRE2 pattern this was translated to (for diagnostics).
  const std::string& translated() const { return translated_; }
  size_t groups() const { return groups_; }
  const std::map<std::string, int>& groupindex() const { return *groupindex_; }

  // pos is a byte offset; as in Python, `^`/`\A` still mean the real start of the string.
  std::optional<PyMatch> search(std::string_view s, size_t pos = 0) const;
  std::optional<PyMatch> match(std::string_view s, size_t pos = 0) const;
  std::optional<PyMatch> fullmatch(std::string_view s, size_t pos = 0) const;
  // Python >= 3.7 iteration: an empty match may follow a non-empty one at the same position.
  std::vector<PyMatch> finditer(std::string_view s) const;
  // re.findall: no group -> whole matches (strings); one group -> that group's text; several
  // -> arrays of group texts. Unmatched groups give "". Result is a JSON array.
  nlohmann::ordered_json findall(std::string_view s) const;
  // re.sub with a Python replacement template (\1, \g<1>, \g<name>, \n, ...); count 0 = all.
  // A bad template throws UserError.
  std::string sub(std::string_view repl, std::string_view s, size_t count = 0) const;
  std::string sub(const std::function<std::string(const PyMatch&)>& repl, std::string_view s,
                  size_t count = 0) const;
  // re.subn: the result and the number of replacements.
  std::pair<std::string, size_t> subn(std::string_view repl, std::string_view s,
                                      size_t count = 0) const;
  // re.split with captured groups included; nullopt for groups that did not take part.
  // maxsplit 0 = all.
  std::vector<std::optional<std::string>> split(std::string_view s, size_t maxsplit = 0) const;

 private:
  struct Impl;
  bool match_at(std::string_view s, size_t pos, unsigned options,
                std::vector<std::pair<size_t, size_t>>& spans) const;

  std::string pattern_;
  unsigned flags_;
  std::string translated_;
  size_t groups_ = 0;
  std::shared_ptr<const std::map<std::string, int>> groupindex_;
  std::unique_ptr<Impl> impl_;
};

// re.escape (Python >= 3.7): backslash before each of ()[]{}?*+-|^$\.&~# and \t\n\r\v\f space.
std::string py_re_escape(std::string_view s);

// Module-level conveniences using the cache (re.search, re.sub, ...).
namespace pyre {
inline std::optional<PyMatch> search(std::string_view pattern, std::string_view s,
                                     unsigned flags = 0) {
  return PyRegex::compile(pattern, flags)->search(s);
}
inline std::string sub(std::string_view pattern, std::string_view repl, std::string_view s,
                       size_t count = 0, unsigned flags = 0) {
  return PyRegex::compile(pattern, flags)->sub(repl, s, count);
}
inline nlohmann::ordered_json findall(std::string_view pattern, std::string_view s,
                                      unsigned flags = 0) {
  return PyRegex::compile(pattern, flags)->findall(s);
}
inline std::vector<std::optional<std::string>> split(std::string_view pattern, std::string_view s,
                                                     size_t maxsplit = 0, unsigned flags = 0) {
  return PyRegex::compile(pattern, flags)->split(s, maxsplit);
}
}  // namespace pyre

}  // namespace lmeval

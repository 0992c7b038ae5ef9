// The reference's hendrycks_math helpers (lm_eval/tasks/hendrycks_math/utils.py): the \boxed{}
// answer of a MATH solution and Hendrycks' string normalisation (strip_string, is_equiv), also
// used by agieval's copy of it and by the leaderboard and minerva MATH helpers.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks {

// last_boxed_only_string: the last "\boxed{...}" (braces balanced) or "\fbox{...}", or
// "\boxed " + the text after the last "\boxed " up to a '$'; nullopt where Python returns None.
std::optional<std::string> last_boxed_only_string(std::string_view s);
// Its brace-matching part alone (agieval's copy has no "\boxed " case).
std::optional<std::string> last_boxed_braced(std::string_view s);

// remove_boxed: the content of what last_boxed_only_string returned; nullopt where one of the
// reference's asserts fails (the leaderboard's copy returns "[invalidanswer]" there).
std::optional<std::string> remove_boxed(std::string_view s);

// Where Python's strip_string raises (an assert in remove_right_units, an index past the end in
// fix_sqrt or fix_fracs, int() in fix_a_slash_b): is_equiv then compares the raw strings.
struct StripStringError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// strip_string (hendrycks_math/utils.py; agieval's _strip_string is the same code except that its
// _fix_a_slash_b catches int()'s ValueError: int_errors_raise false). Throws StripStringError.
std::string hendrycks_strip_string(std::string_view s, bool int_errors_raise = true);

// is_equiv(str1, str2): strip_string of both equal, or the raw strings equal where it raised.
bool hendrycks_is_equiv(std::string_view a, std::string_view b);

// process_docs: each row with "answer" = remove_boxed(last_boxed_only_string(solution)).
std::vector<Json> hendrycks_math_process_docs(std::vector<Json> docs);

// process_results: the text between the first and last '$' of the response (or all of it) against
// the solution's boxed answer; {"exact_match": 0 or 1}.
Json hendrycks_math_process_results(const Json& doc, std::string_view response);

}  // namespace lmeval::tasks

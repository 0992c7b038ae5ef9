// The report's sample browser: every document of every task with its prompt, each run's
// responses, filtered answer and scores, and the target, two runs side by side; searched,
// filtered and paged by a small inline script so that thousands of documents stay responsive.
#pragma once

#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

// The <h2> section (data as inline JSON, the script, its style); empty when no run has samples.
std::string sample_browser_section(const std::vector<Run>& runs);

// What the browser shows of one sample line's fields, as text.
std::string prompt_text(const Json& arguments);
// The continuations of a multiple-choice request (arg_1 of every gen_args_i sharing arg_0's
// context); empty for other requests.
std::vector<std::string> choices_of(const Json& arguments);
std::string responses_text(const Json& resps);
// A filtered answer: the text of a generation, or for log-likelihoods the chosen (highest)
// choice, "choice k: <continuation>".
std::string answer_text(const Json& filtered, const std::vector<std::string>& choices);

}  // namespace lmeval::analysis

// SQuAD answer scoring as transformers' data/metrics/squad_metrics.py (and the copies of it in
// evaluate's squad/squad_v2 metrics and super_glue record's t5_utils) computes it; the task
// helper ports that call squad_metrics.* share these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks::squad {

// normalize_answer: lower, drop ASCII punctuation, articles (a|an|the, Unicode \b) to " ",
// whitespace runs to one space.
std::string normalize_answer(std::string_view s);
// get_tokens: [] for "", else normalize_answer(s).split().
std::vector<std::string> get_tokens(std::string_view s);
// sum((Counter(a) & Counter(b)).values()).
int64_t common_count(const std::vector<std::string>& a, const std::vector<std::string>& b);
// compute_exact(a_gold, a_pred): int(normalize_answer(gold) == normalize_answer(pred)).
Json compute_exact(const std::string& a_gold, const std::string& a_pred);
// compute_f1(a_gold, a_pred): an int where a side has no tokens (1 when both have none) or no
// token overlaps, else a float, as the Python function returns.
Json compute_f1(const std::string& a_gold, const std::string& a_pred);

}  // namespace lmeval::tasks::squad

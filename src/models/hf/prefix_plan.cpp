#include "models/hf/prefix_plan.hpp"

#include <algorithm>
#include <numeric>

namespace lmeval::hf {

std::vector<PrefixStep> plan_prefixes(const std::vector<std::vector<Token>>& prompts,
                                      const std::vector<int64_t>& lengths, int64_t min_shared,
                                      int64_t max_kept_tokens) {
  const size_t R = prompts.size();
  std::vector<PrefixStep> plan(R);
  if (R < 2) return plan;
  auto span_end = [&](size_t i) { return prompts[i].begin() + lengths[i]; };
  // Sorted lexicographically, two prompts' common prefix is the smallest common prefix of the
  // neighbours between them, and the prompts sharing at least min_shared tokens with one prompt
  // lie around it: one outward walk per prompt finds them.
  std::vector<size_t> sorted(R);
  std::iota(sorted.begin(), sorted.end(), size_t{0});
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(prompts[a].begin(), span_end(a), prompts[b].begin(),
                                        span_end(b));
  });
  std::vector<size_t> rank(R);
  for (size_t k = 0; k < R; ++k) rank[sorted[k]] = k;
  std::vector<int64_t> next_lcp(R - 1);  // common prefix of sorted[k] and sorted[k + 1]
  for (size_t k = 0; k + 1 < R; ++k) {
    const size_t a = sorted[k], b = sorted[k + 1];
    next_lcp[k] =
        std::mismatch(prompts[a].begin(), span_end(a), prompts[b].begin(), span_end(b)).first -
        prompts[a].begin();
  }

  std::vector<int64_t> owner(R, -1), assigned(R, 0), refs(R, 0);
  int64_t kept = 0;
  auto unref = [&](int64_t e, PrefixStep& step) {
    if (--refs[e] > 0) return;
    kept -= plan[e].keep;
    step.release.push_back(e);
  };
  std::vector<std::pair<size_t, int64_t>> gains;  // later prompt, tokens it would copy
  for (size_t i = 0; i < R; ++i) {
    PrefixStep& step = plan[i];
    if (owner[i] >= 0) {
      step.source = owner[i];
      step.copy = assigned[i];
      unref(owner[i], step);
    }
    gains.clear();
    int64_t keep = 0;
    auto consider = [&](size_t j, int64_t lcp) {
      if (j > i && lcp >= assigned[j] + min_shared) {
        gains.emplace_back(j, lcp);
        keep = std::max(keep, lcp);
      }
    };
    int64_t m = lengths[i];
    for (size_t k = rank[i]; k > 0 && (m = std::min(m, next_lcp[k - 1])) >= min_shared; --k)
      consider(sorted[k - 1], m);
    m = lengths[i];
    for (size_t k = rank[i]; k + 1 < R && (m = std::min(m, next_lcp[k])) >= min_shared; ++k)
      consider(sorted[k + 1], m);
    if (gains.empty() || kept + keep > max_kept_tokens) continue;
    step.keep = keep;
    kept += keep;
    for (const auto& [j, lcp] : gains) {
      if (owner[j] >= 0) unref(owner[j], step);
      owner[j] = static_cast<int64_t>(i);
      assigned[j] = lcp;
      ++refs[i];
    }
  }
  return plan;
}

}  // namespace lmeval::hf

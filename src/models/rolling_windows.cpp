// get_rolling_token_windows + make_disjoint_window, context_len = 1.
#include "lmeval/models/rolling_windows.hpp"

#include <algorithm>

namespace lmeval {

std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> rolling_token_windows(
    const std::vector<int32_t>& tokens, int32_t prefix_token, int64_t max_seq_len) {
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> out;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return out;
  const int64_t L = std::max<int64_t>(max_seq_len, 1);
  const int64_t first = std::min(L, n);
  // First window: [prefix] + tokens[:first-1] predicts tokens[:first]; disjoint context = [prefix].
  out.push_back({{prefix_token}, std::vector<int32_t>(tokens.begin(), tokens.begin() + first)});
  int64_t predicted = first;
  while (predicted < n) {
    const int64_t p = std::min(n - predicted, L);
    const int64_t end = predicted + p;
    // Input tokens[end-L-1 : end-1]; made disjoint, the context is tokens[end-L-1 : end-p].
    const int64_t cb = std::max<int64_t>(end - L - 1, 0);
    out.emplace_back(std::vector<int32_t>(tokens.begin() + cb, tokens.begin() + (end - p)),
                     std::vector<int32_t>(tokens.begin() + (end - p), tokens.begin() + end));
    predicted += p;
  }
  return out;
}

}  // namespace lmeval

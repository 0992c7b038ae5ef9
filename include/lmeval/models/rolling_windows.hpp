// The reference's rolling windows for loglikelihood_rolling (lm_eval/utils.py).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace lmeval {

// get_rolling_token_windows(tokens, prefix_token, max_seq_len, context_len=1) with each window
// passed through make_disjoint_window: (context ids, ids to score) pairs covering every token once.
std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> rolling_token_windows(
    const std::vector<int32_t>& tokens, int32_t prefix_token, int64_t max_seq_len);

}  // namespace lmeval

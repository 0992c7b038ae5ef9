// Which generation prompts copy keys and values from which earlier prompt (issue 34, point 2).
// Continuous batching admits its prompts in a fixed order, and every prompt is known before the
// first one runs, so the sharing can be planned up front: a prompt keeps its first tokens (an
// "entry") only when a later prompt will copy them, and an entry is dropped as soon as the last
// prompt assigned to it has copied (a reference count), however many few-shot prefixes the
// admission order interleaves (leaderboard_math_hard's seven subtasks, bbh's 27, sorted together
// by length). Tokens only: no tensors here.
#pragma once

#include <cstdint>
#include <vector>

#include "models/hf/transformer.hpp"  // Token

namespace lmeval::hf {

struct PrefixStep {
  int64_t source = -1;  // the earlier prompt whose entry this prompt copies from (-1: none)
  int64_t copy = 0;     // tokens copied from it (positions 0..copy-1)
  int64_t keep = 0;     // this prompt's first tokens to keep as an entry (0: none)
  // Entries whose last copy this step made (or that lost every prompt assigned to them):
  // dropped after this step's copy.
  std::vector<int64_t> release;
};

// prompts[i][0, lengths[i]) is prompt i's prefill, in admission order. A prompt copies from an
// entry when they share at least `min_shared` tokens; a new entry is kept only where it gives a
// later prompt at least `min_shared` more tokens than its current assignment, and only while the
// kept entries hold at most `max_kept_tokens` tokens together.
std::vector<PrefixStep> plan_prefixes(const std::vector<std::vector<Token>>& prompts,
                                      const std::vector<int64_t>& lengths, int64_t min_shared,
                                      int64_t max_kept_tokens);

}  // namespace lmeval::hf

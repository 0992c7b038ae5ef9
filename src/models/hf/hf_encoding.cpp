// How both hf backends encode requests (hf_encoding.hpp).
#include "models/hf/hf_encoding.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::hf {

bool hf_add_special_tokens(const std::string& text, std::optional<bool> add_special_tokens,
                           std::optional<bool> add_bos_token, const std::string& prefix_text) {
  bool special = true;  // the tokenizer's default: its post-processor's special tokens
  if (add_special_tokens)
    special = *add_special_tokens;
  else if (add_bos_token)
    special = *add_bos_token;
  if (!add_special_tokens && text.rfind(prefix_text, 0) == 0) special = false;
  return special;
}

TokenPair empty_context_pair(std::vector<Token> continuation, Token prefix) {
  if (continuation.empty()) return {{prefix}, {}};
  if (continuation[0] != prefix) return {{prefix}, std::move(continuation)};
  return {{continuation[0]}, std::vector<Token>(continuation.begin() + 1, continuation.end())};
}

std::pair<std::string, std::string> move_trailing_whitespace(std::string context,
                                                             std::string continuation) {
  const size_t kept = unicode::py_rstrip(context).size();
  if (kept < context.size()) {
    continuation = context.substr(kept) + continuation;
    context.resize(kept);
  }
  return {std::move(context), std::move(continuation)};
}

void check_continuation_length(size_t continuation_tokens, int64_t max_length) {
  if (static_cast<int64_t>(continuation_tokens) > max_length)
    throw UserError("a continuation of " + std::to_string(continuation_tokens) +
                        " tokens is longer than max_length " + std::to_string(max_length),
                    {"", 0, 0, "max_length"}, "continuations shorter than the model's max_length");
}

std::vector<size_t> by_context_length(
    const std::vector<GenerationRequest>& requests, const std::vector<size_t>& members,
    const std::function<std::vector<Token>(const std::string&)>& encode,
    std::vector<int64_t>& lengths) {
  std::vector<std::pair<int64_t, size_t>> keyed;
  for (size_t i : members)
    keyed.push_back({static_cast<int64_t>(encode(requests[i].context).size()), i});
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return requests[a.second].context < requests[b.second].context;
  });
  std::vector<size_t> order;
  lengths.clear();
  for (const auto& [len, i] : keyed) {
    order.push_back(i);
    lengths.push_back(len);
  }
  return order;
}

}  // namespace lmeval::hf

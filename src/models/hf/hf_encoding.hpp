// How both hf backends encode requests (reference: HFLM.tok_encode, TemplateLM.loglikelihood and
// _encode_pair in lm_eval/api/model.py, the Collator's generate_until order).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/models/lm.hpp"
#include "models/hf/transformer.hpp"

namespace lmeval::hf {

using TokenPair = std::pair<std::vector<Token>, std::vector<Token>>;

// HFLM.tok_encode's add_special_tokens: the caller's, else add_bos_token=, else the tokenizer's
// own (true); never for a text that starts with the prefix token's text when the caller left it
// open (has_bos_prefix: the prefix is not added twice).
bool hf_add_special_tokens(const std::string& text, std::optional<bool> add_special_tokens,
                           std::optional<bool> add_bos_token, const std::string& prefix_text);

// TemplateLM.loglikelihood with an empty context: the prefix token is the context, unless the
// continuation already starts with it (then that token is).
TokenPair empty_context_pair(std::vector<Token> continuation, Token prefix);

// TemplateLM._encode_pair: the context's trailing whitespace moves to the front of the
// continuation. Returns (context, continuation).
std::pair<std::string, std::string> move_trailing_whitespace(std::string context,
                                                             std::string continuation);

// _loglikelihood_tokens asserts len(continuation_enc) <= max_length: a UserError otherwise.
void check_continuation_length(size_t continuation_tokens, int64_t max_length);

// generate_until's _collate, (-len(tok_encode(context)), context): `members` longest encoded
// context first, ties by context text; `lengths` receives the encoded lengths in that order.
std::vector<size_t> by_context_length(
    const std::vector<GenerationRequest>& requests, const std::vector<size_t>& members,
    const std::function<std::vector<Token>(const std::string&)>& encode,
    std::vector<int64_t>& lengths);

}  // namespace lmeval::hf

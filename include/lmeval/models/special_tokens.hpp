// The special tokens transformers passes to chat templates by name (bos_token, eos_token, ...).
#pragma once

#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval {

// {"bos_token": "<s>", ...} for the tokenizer's special tokens that have a text.
Json chat_template_special_tokens(const Tokenizer& tokenizer);

// Copies a special token into TokenizerInfo's text/id pair (each only when the token has one).
void copy_special_token(const SpecialToken& token, std::optional<std::string>& text,
                        std::optional<int64_t>& id);

}  // namespace lmeval

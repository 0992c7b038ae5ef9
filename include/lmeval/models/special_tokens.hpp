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

// The tokenizer facts of HFLM's results (both hf backends): bos/eos, the pad token (the
// tokenizer's, else `pad_id` as resolved at load), eot and max_length.
TokenizerInfo hf_tokenizer_info(const Tokenizer& tokenizer, std::optional<int64_t> pad_id,
                                std::optional<int64_t> eot_id, int64_t max_length);

// The tokenizer's chat template of that name; nullopt when it has none.
std::optional<std::string> named_chat_template(const Tokenizer& tokenizer, const std::string& name);

}  // namespace lmeval

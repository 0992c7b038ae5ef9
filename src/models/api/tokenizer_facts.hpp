// The tokenizer facts (results' tokenizer fields) of the API backends that hold a tokenizer
// (TemplateAPI's, VLLM's, SGLangLM's).
#pragma once

#include <cstdint>

#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval::api {

// bos and eos as the tokenizer has them; the pad token as configure_pad_token picks it (pad, else
// unk, else eos); eot the EOS id; `max_length` as the backend resolved it.
TokenizerInfo tokenizer_facts(const Tokenizer& tokenizer, int64_t max_length);

}  // namespace lmeval::api

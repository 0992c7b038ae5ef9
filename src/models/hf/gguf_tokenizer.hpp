// The tokenizer a GGUF file's metadata describes, built as transformers builds it for
// AutoTokenizer.from_pretrained(folder, gguf_file=...)
// (integrations/gguf/gguf_tokenizer_mapping.py: get_gguf_tokenizer, convert_gguf_tokenizer and its
// builders), as a tokenizer.json and a tokenizer_config.json held in memory for lm-eval's own
// tokenizer.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>

#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/hf/gguf_file.hpp"

namespace lmeval::hf {

struct GgufTokenizerJson {
  nlohmann::json tokenizer;  // what the backend's to_str() would give
  nlohmann::json config;     // add_bos_token, add_eos_token, the special tokens, chat_template
};

// Throws UserError naming the file and the metadata key for a file without a tokenizer, a
// tokenizer.ggml.model transformers has no builder for, or a malformed key.
GgufTokenizerJson gguf_tokenizer_json(const GgufFile& f);

std::unique_ptr<Tokenizer> gguf_tokenizer(const GgufFile& f);

}  // namespace lmeval::hf

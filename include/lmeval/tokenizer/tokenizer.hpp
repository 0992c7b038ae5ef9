// The one tokenizer interface the rest of lm-eval uses (tokenizer.json pipelines, SentencePiece).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lmeval {

using TokenId = int32_t;

struct SpecialToken {
  std::string text;
  std::optional<TokenId> id;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Same ids as Hugging Face `tokenizer.encode(text, add_special_tokens=...)`.
  virtual std::vector<TokenId> encode(std::string_view text, bool add_special_tokens) const = 0;
  // Same text as transformers' `tokenizer.decode(ids, skip_special_tokens=...)`: the
  // `tokenizers` decode, then clean_up_tokenization() when tokenizer_config.json sets
  // clean_up_tokenization_spaces (GPT-2's does). Ids outside the vocabulary are left out.
  virtual std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const = 0;
  // tokenizer_config.json clean_up_tokenization_spaces (false when absent, as transformers 4.45+).
  virtual bool clean_up_tokenization_spaces() const { return false; }

  virtual std::optional<TokenId> token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> id_to_token(TokenId id) const = 0;
  virtual size_t vocab_size() const = 0;

  // From tokenizer_config.json / special_tokens_map.json (empty text / no id when unset).
  virtual const SpecialToken& bos_token() const = 0;
  virtual const SpecialToken& eos_token() const = 0;
  virtual const SpecialToken& pad_token() const = 0;
  virtual const SpecialToken& unk_token() const = 0;

  // The default chat template (empty when none); named templates when a list was given (a single
  // template is returned whatever the name, as TemplateLM.chat_template does).
  virtual std::string chat_template(std::string_view name = {}) const = 0;
  // Where the chat templates came from ("<dir>/tokenizer_config.json $.chat_template" or
  // "<dir>/chat_template.jinja"), for messages; empty when unknown.
  virtual std::string chat_template_source() const { return {}; }
  // tokenizer_config.json model_max_length, if present.
  virtual std::optional<int64_t> model_max_length() const = 0;
};

// Loads a tokenizer from a tokenizer.json file, a SentencePiece tokenizer.model file, or a
// model folder (tokenizer.json preferred, then tokenizer.model; tokenizer_config.json read when
// present). Throws UserError naming the file and JSON path of any problem.
// Invalid UTF-8 in text given to encode() is read with each maximal ill-formed subsequence
// replaced by U+FFFD (Python's errors="replace"), then tokenized as that text.
// model_max_length() is empty when tokenizer_config.json gives none or gives transformers'
// "no limit" sentinel (1e30).
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

// A tokenizer described in memory: `tokenizer` as a tokenizer.json holds it and
// `tokenizer_config` as a tokenizer_config.json does (what transformers builds from a GGUF file's
// metadata, models/hf/gguf_tokenizer.hpp). `source` names where they came from, for messages.
std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& tokenizer,
                                               const nlohmann::json& tokenizer_config,
                                               const std::string& source);

// GPT-2's byte-level alphabet (convert_slow_tokenizer.bytes_to_unicode): each byte of `bytes`
// as its printable character; and whether every character of `token` is one of those.
std::string byte_level_spelling(std::string_view bytes);
bool is_byte_level_spelled(std::string_view token);

// transformers' clean_up_tokenization: " ." -> ".", " ?" -> "?", " !" -> "!", " ," -> ",",
// " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " 's" -> "'s", " 've" -> "'ve", " 're" -> "'re".
std::string clean_up_tokenization(std::string text);

// encode() of every text, in order, spread over `threads` threads (0: hardware concurrency).
std::vector<std::vector<TokenId>> encode_batch(const Tokenizer& tokenizer,
                                               std::span<const std::string> texts,
                                               bool add_special_tokens, unsigned threads = 0);

}  // namespace lmeval

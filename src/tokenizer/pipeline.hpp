// Internal pieces of a tokenizer.json pipeline: normalizers, pre-tokenizers, models,
// post-processors and decoders, each built from its JSON node.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval::tok {

using Json = nlohmann::json;

// Where a JSON node lives, for error messages: the file and the JSON path ("$.model.vocab").
struct Where {
  std::string file;
  std::string path;
  Where operator/(std::string_view key) const;
  Where operator[](size_t index) const;
};

[[noreturn]] void fail(const Where& w, const std::string& message, std::string expected = {});
// Member access with type checks; `fail`s naming the path on a missing or mistyped member.
const Json& req(const Json& j, const Where& w, const char* key);
std::string req_string(const Json& j, const Where& w, const char* key);
std::string opt_string(const Json& j, const Where& w, const char* key, std::string dflt);
bool opt_bool(const Json& j, const Where& w, const char* key, bool dflt);
int64_t opt_int(const Json& j, const Where& w, const char* key, int64_t dflt);
const Json& expect_object(const Json& j, const Where& w);

// A piece of text during pre-tokenization. `at_start`: it begins at offset 0 of the original
// input (what Metaspace's prepend_scheme "first" looks at).
struct Split {
  std::string text;
  bool at_start = false;
};
using Splits = std::vector<Split>;

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& s) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(Splits& splits) const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual void tokenize(std::string_view word, std::vector<TokenId>& out) const = 0;
  virtual std::optional<TokenId> token_to_id(std::string_view token) const = 0;
  virtual const std::string* id_to_token(TokenId id) const = 0;
  virtual size_t vocab_size() const = 0;
};

// Resolves token text to ids while a post-processor is built.
class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Only called for add_special_tokens=true.
  virtual void process(std::vector<TokenId>& ids) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Normalizer> make_normalizer(const Json& j, const Where& w);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& j, const Where& w);
std::unique_ptr<Model> make_model(const Json& j, const Where& w);
std::unique_ptr<PostProcessor> make_post_processor(const Json& j, const Where& w,
                                                   const Model& model);
std::unique_ptr<Decoder> make_decoder(const Json& j, const Where& w);

// A post-processor that wraps ids as [prefix..., ids..., suffix...].
std::unique_ptr<PostProcessor> make_wrap_processor(std::vector<TokenId> prefix,
                                                   std::vector<TokenId> suffix);

// GPT-2's byte <-> printable character table.
const std::string& byte_to_char(unsigned char b);  // UTF-8 of the character for byte b
int char_to_byte(char32_t c);                      // -1 when c is not in the table

}  // namespace lmeval::tok

// Concrete tokenizers behind lmeval::Tokenizer: the tokenizer.json pipeline and the
// SentencePiece wrapper, plus what both read from tokenizer_config.json.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lmeval/tokenizer/tokenizer.hpp"
#include "tokenizer/pipeline.hpp"

namespace lmeval::tok {

// tokenizer_config.json (and special_tokens_map.json) facts.
struct TokenizerConfig {
  std::optional<bool> add_bos_token, add_eos_token;
  std::optional<bool> legacy;
  bool clean_up_tokenization_spaces = false;
  std::optional<std::string> bos, eos, pad, unk;      // token text; nullopt when unset or null
  std::map<std::string, std::string> chat_templates;  // "default" for a plain string
  bool named_chat_templates = false;  // a list of {name, template}, not one template
  std::string chat_template_source;   // where the templates came from, for messages
  std::optional<int64_t> model_max_length;
  std::vector<std::pair<TokenId, std::string>> added_tokens;  // added_tokens_decoder

  // Reads `dir`/tokenizer_config.json, special_tokens_map.json and chat_template.jinja when
  // present.
  static TokenizerConfig load(const std::filesystem::path& dir);
  // The facts of a tokenizer_config.json's object `j`; `w` names it for messages.
  static TokenizerConfig from_json(const Json& j, const Where& w);
};

class TokenizerBase : public Tokenizer {
 public:
  const SpecialToken& bos_token() const override { return bos_; }
  const SpecialToken& eos_token() const override { return eos_; }
  const SpecialToken& pad_token() const override { return pad_; }
  const SpecialToken& unk_token() const override { return unk_; }
  std::string chat_template(std::string_view name = {}) const override;
  std::string chat_template_source() const override { return config_.chat_template_source; }
  std::optional<int64_t> model_max_length() const override { return config_.model_max_length; }
  bool clean_up_tokenization_spaces() const override {
    return config_.clean_up_tokenization_spaces;
  }

 protected:
  // Resolves the special tokens' ids (call once the vocabulary is loaded).
  void apply_config(TokenizerConfig config);
  TokenizerConfig config_;
  SpecialToken bos_, eos_, pad_, unk_;
};

struct AddedToken {
  TokenId id;
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// Leftmost-longest matcher over added-token strings (what HF's Aho-Corasick does).
class TokenTrie {
 public:
  void add(const std::string& s, size_t token_index);
  bool empty() const { return nodes_.size() <= 1; }
  // Longest token starting at text[pos]: returns its length and sets index, or 0.
  size_t longest_at(std::string_view text, size_t pos, size_t& index) const;
  bool may_start(unsigned char c) const { return first_[c]; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int>> next;
    int64_t token = -1;
  };
  std::vector<Node> nodes_{1};
  bool first_[256] = {};
};

class HfTokenizer : public TokenizerBase {
 public:
  // `json_path`: the tokenizer.json; `config`: tokenizer_config.json of its folder.
  HfTokenizer(const std::filesystem::path& json_path, TokenizerConfig config);
  // A tokenizer.json's object held in memory; `source` names it for messages.
  HfTokenizer(const Json& j, const std::string& source, TokenizerConfig config);

  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens) const override;
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const override;
  std::optional<TokenId> token_to_id(std::string_view token) const override;
  std::optional<std::string> id_to_token(TokenId id) const override;
  size_t vocab_size() const override { return vocab_size_; }

 private:
  struct Part {
    std::string text;
    bool at_start;
    TokenId token;  // -1: text still to tokenize
  };
  void build(const Json& j, const Where& root, TokenizerConfig config);
  void split_added(const TokenTrie& trie, const Part& part, std::vector<Part>& out) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_;
  std::unordered_map<std::string, size_t> added_by_content_;
  std::unordered_map<TokenId, size_t> added_by_id_;
  std::unordered_set<std::string> special_contents_;
  TokenTrie raw_trie_, normalized_trie_;
  size_t vocab_size_ = 0;
};

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const std::filesystem::path& model_path,
                                                        TokenizerConfig config);

}  // namespace lmeval::tok

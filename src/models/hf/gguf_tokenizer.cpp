// transformers 5.23's tokenizer from a GGUF file's metadata
// (integrations/gguf/gguf_tokenizer_mapping.py), written out as the tokenizer.json its backend
// holds: the builder tokenizer.ggml.model (and the architecture) chooses, the control and
// user-defined tokens added, the split regex tokenizer.ggml.pre names, and the special tokens the
// tokenizer class adds.
#include "models/hf/gguf_tokenizer.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::hf {

// A named namespace, not an anonymous one: in a unity build its names meet gguf_model.cpp's.
namespace gguf_tokenizer_impl {

using nlohmann::json;

// llama.cpp's token types (gguf.TokenType).
constexpr int64_t kControl = 3, kUserDefined = 4;

// GGUF_PRE_TOKENIZER_SPLITS: tokenizer.ggml.pre -> the Split regex transformers puts before a
// byte-level pre-tokenizer (the regexes of Llama 3, Qwen2 (tokenization_qwen2.PRETOKENIZE_REGEX),
// Qwen3.5, Tekken and GPT-4o).
constexpr const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen35Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kTekkenSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt4oSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::array<std::pair<const char*, const char*>, 23> kPreSplits = {{
    {"llama3", kLlama3Split},       {"llama-v3", kLlama3Split},
    {"llama-bpe", kLlama3Split},    {"falcon3", kLlama3Split},
    {"falcon-h1", kLlama3Split},    {"pixtral", kLlama3Split},
    {"midm-2.0", kLlama3Split},     {"lfm2", kLlama3Split},
    {"jina-v5-nano", kLlama3Split}, {"dbrx", kLlama3Split},
    {"smaug-bpe", kLlama3Split},    {"tekken", kTekkenSplit},
    {"qwen2", kQwen2Split},         {"deepseek-r1-qwen", kQwen2Split},
    {"kormo", kQwen2Split},         {"f2llmv2", kQwen2Split},
    {"megrez", kQwen2Split},        {"qwen35", kQwen35Split},
    {"gpt-4o", kGpt4oSplit},        {"llama4", kGpt4oSplit},
    {"kanana2", kGpt4oSplit},       {"talkie", kGpt4oSplit},
    {"minimax-m2", kGpt4oSplit},
}};

const char* kExpected =
    "a GGUF file whose metadata holds a tokenizer (tokenizer.ggml.model \"llama\" or \"gpt2\" "
    "with tokenizer.ggml.tokens), or tokenizer=FOLDER naming the model's Hugging Face tokenizer";

UserError bad(const GgufFile& f, const std::string& key, const std::string& what) {
  return UserError("GGUF metadata '" + key + "' " + what, {f.path().string(), 0, 0, key},
                   kExpected);
}

const GgufValue* array_of(const GgufFile& f, const std::string& key, GgufValue::Kind kind,
                          const char* kind_name) {
  const GgufValue* v = f.find(key);
  if (!v) return nullptr;
  if (v->kind != GgufValue::Kind::kArray)
    throw bad(f, key, std::string("is not an array of ") + kind_name);
  for (const auto& i : v->items) {
    const bool number = i.kind == GgufValue::Kind::kUnsigned ||
                        i.kind == GgufValue::Kind::kSigned || i.kind == GgufValue::Kind::kFloat;
    if (kind == GgufValue::Kind::kFloat ? !number : i.kind != kind)
      throw bad(f, key, std::string("is not an array of ") + kind_name);
  }
  return v;
}

double number(const GgufValue& v) {
  switch (v.kind) {
    case GgufValue::Kind::kUnsigned:
      return static_cast<double>(v.u);
    case GgufValue::Kind::kSigned:
      return static_cast<double>(v.i);
    default:
      return v.f;
  }
}

// get_gguf_tokenizer's tokenizer_dict: the metadata the builders read.
struct Dict {
  std::string arch, type, pre;
  std::vector<std::string> tokens;
  std::vector<double> scores;
  std::vector<int64_t> token_type;
  std::vector<std::string> merges;
  bool has_scores = false, has_merges = false;
};

Dict read_dict(const GgufFile& f) {
  Dict d;
  const GgufValue* arch = f.find("general.architecture");
  if (arch && arch->kind == GgufValue::Kind::kString) d.arch = arch->s;
  auto text = [&](const char* key, std::string& out) {
    if (const GgufValue* v = f.find(key)) {
      if (v->kind != GgufValue::Kind::kString) throw bad(f, key, "is not a string");
      out = v->s;
    }
  };
  text("tokenizer.ggml.model", d.type);
  text("tokenizer.ggml.pre", d.pre);
  const GgufValue* tokens =
      array_of(f, "tokenizer.ggml.tokens", GgufValue::Kind::kString, "strings");
  if (!tokens)
    throw UserError("this GGUF file holds no tokenizer (no tokenizer.ggml.tokens in its metadata)",
                    {f.path().string(), 0, 0, "tokenizer.ggml.tokens"}, kExpected);
  for (const auto& t : tokens->items) d.tokens.push_back(t.s);
  if (const GgufValue* s =
          array_of(f, "tokenizer.ggml.scores", GgufValue::Kind::kFloat, "numbers")) {
    d.has_scores = true;
    for (const auto& v : s->items) d.scores.push_back(number(v));
  }
  if (const GgufValue* t =
          array_of(f, "tokenizer.ggml.token_type", GgufValue::Kind::kFloat, "integers"))
    for (const auto& v : t->items) d.token_type.push_back(static_cast<int64_t>(number(v)));
  if (const GgufValue* m =
          array_of(f, "tokenizer.ggml.merges", GgufValue::Kind::kString, "strings")) {
    d.has_merges = true;
    for (const auto& v : m->items) d.merges.push_back(v.s);
  }
  return d;
}

// A vocabulary as the Python dict {token: index} the builders make: the last index of a token
// written twice wins, and the keys keep the order of their first appearance.
struct Vocab {
  std::vector<std::string> keys;
  std::unordered_map<std::string, int64_t> ids;
  explicit Vocab(const std::vector<std::string>& tokens) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      auto [it, fresh] = ids.insert_or_assign(tokens[i], static_cast<int64_t>(i));
      if (fresh) keys.push_back(tokens[i]);
    }
  }
  json to_json() const {
    json v = json::object();
    for (const auto& k : keys) v[k] = ids.at(k);
    return v;
  }
};

// tokenization_utils_base.generate_merges(vocab, vocab_scores) with scores given (so sorted
// best first): every split of every scored token into two vocabulary pieces, the splits of one
// token ordered by the pieces' ids, then all of them by (score, left length, right length),
// highest first, ties kept in that order (Python's sort is stable under reverse=True).
json generate_merges(const std::unordered_map<std::string, int64_t>& vocab,
                     const std::vector<std::pair<std::string, double>>& scores) {
  struct Merge {
    std::string l, r;
    double score;
    size_t ll, lr;
    int64_t il, ir;
  };
  std::vector<Merge> merges;
  for (const auto& [token, score] : scores) {
    const std::u32string cps = unicode::decode(token);
    std::vector<Merge> local;
    for (size_t i = 1; i < cps.size(); ++i) {
      std::string l = unicode::encode(std::u32string_view(cps).substr(0, i));
      std::string r = unicode::encode(std::u32string_view(cps).substr(i));
      auto a = vocab.find(l), b = vocab.find(r);
      if (a == vocab.end() || b == vocab.end()) continue;
      local.push_back({std::move(l), std::move(r), score, i, cps.size() - i, a->second, b->second});
    }
    std::stable_sort(local.begin(), local.end(), [](const Merge& x, const Merge& y) {
      return std::tie(x.il, x.ir) < std::tie(y.il, y.ir);
    });
    std::move(local.begin(), local.end(), std::back_inserter(merges));
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& x, const Merge& y) {
    return std::tie(x.score, x.ll, x.lr) > std::tie(y.score, y.ll, y.lr);
  });
  json out = json::array();
  for (const auto& m : merges) out.push_back(json::array({m.l, m.r}));
  return out;
}

// get_merges: the file's merges ("a b"), or those the vocabulary and its scores imply.
json get_merges(const GgufFile& f, const Dict& d, const Vocab& vocab,
                const std::vector<std::pair<std::string, double>>* scores = nullptr) {
  if (d.has_merges) {
    json out = json::array();
    for (size_t i = 0; i < d.merges.size(); ++i) {
      const std::string& m = d.merges[i];
      const auto sp = m.find(' ');
      if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
        throw bad(f, "tokenizer.ggml.merges",
                  "entry " + std::to_string(i) + " ('" + m +
                      "') is not two tokens separated by one space");
      out.push_back(json::array({m.substr(0, sp), m.substr(sp + 1)}));
    }
    return out;
  }
  if (scores) return generate_merges(vocab.ids, *scores);
  if (!d.has_scores || d.scores.size() != d.tokens.size())
    throw bad(f, "tokenizer.ggml.scores",
              d.has_scores ? "does not have one score per token"
                           : "is missing, and with no tokenizer.ggml.merges the merges come from "
                             "the scores");
  // dict(zip(tokens, scores)): first appearance's place, last appearance's score.
  std::unordered_map<std::string, double> last;
  for (size_t i = 0; i < d.tokens.size(); ++i) last[d.tokens[i]] = d.scores[i];
  std::vector<std::pair<std::string, double>> ordered;
  for (const auto& k : vocab.keys) ordered.emplace_back(k, last.at(k));
  return generate_merges(vocab.ids, ordered);
}

json bpe(json vocab, json merges, bool sentencepiece) {
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", sentencepiece ? json(nullptr) : json("")},
          {"end_of_word_suffix", sentencepiece ? json(nullptr) : json("")},
          {"fuse_unk", sentencepiece},
          {"byte_fallback", sentencepiece},
          {"ignore_merges", false},
          {"vocab", std::move(vocab)},
          {"merges", std::move(merges)}};
}

// What a builder makes: the tokenizer.json without its added tokens, the vocabulary the added
// tokens are looked up in, and the tokenizer class's own special tokens (its defaults).
struct Built {
  json tokenizer;
  std::unordered_map<std::string, int64_t> vocab;
  std::vector<std::string> class_specials;
};

json metaspace() {
  return {{"type", "Metaspace"},
          {"replacement", "\u2581"},
          {"prepend_scheme", "first"},
          {"split", false}};
}

// LlamaTokenizer's decoder (add_prefix_space is never passed by the builder: True).
json sentencepiece_decoder() {
  return {
      {"type", "Sequence"},
      {"decoders",
       json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}},
                    {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
}

// sentencepiece_tokenizer: LlamaTokenizer(vocab=the tokens as the file spells them, merges).
Built sentencepiece(const GgufFile& f, const Dict& d) {
  const Vocab vocab(d.tokens);
  Built b;
  b.tokenizer = {{"normalizer", nullptr},
                 {"pre_tokenizer", metaspace()},
                 {"post_processor", nullptr},
                 {"decoder", sentencepiece_decoder()},
                 {"model", bpe(vocab.to_json(), get_merges(f, d, vocab), true)}};
  b.vocab = vocab.ids;
  b.class_specials = {"<unk>", "<s>", "</s>"};
  return b;
}

// phi3_tokenizer: the prefix space from a normalizer, no pre-tokenizer.
Built phi3(const GgufFile& f, const Dict& d) {
  Built b = sentencepiece(f, d);
  b.tokenizer["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       json::array(
           {{{"type", "Prepend"}, {"prepend", "\u2581"}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}})}};
  b.tokenizer["pre_tokenizer"] = nullptr;
  return b;
}

// Python's str.isspace, for gemma_tokenizer's `not t.strip()`.
bool python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// gemma_tokenizer: a token of whitespace holding a space is respelled as that many "\u2581"
// (llama.cpp stores Gemma's space runs as real spaces); without the file's merges, they are
// rebuilt with each token's position (-index) as its score, not the file's scores. Then
// GemmaTokenizer: spaces normalised to "\u2581", no prefix space, <unk> as the BPE's unknown.
Built gemma(const GgufFile& f, const Dict& d) {
  Dict respelled = d;
  for (auto& t : respelled.tokens) {
    const std::u32string cps = unicode::decode(t);
    if (t.find(' ') != std::string::npos && std::all_of(cps.begin(), cps.end(), python_space)) {
      std::string r;
      for (size_t i = 0; i < cps.size(); ++i) r += "\u2581";
      t = std::move(r);
    }
  }
  const Vocab vocab(respelled.tokens);
  // {token: -index}: first appearance's place, last appearance's position.
  std::vector<std::pair<std::string, double>> positions;
  for (const auto& k : vocab.keys) positions.emplace_back(k, -static_cast<double>(vocab.ids.at(k)));
  json model = bpe(vocab.to_json(), get_merges(f, respelled, vocab, &positions), true);
  model["unk_token"] = "<unk>";
  Built b;
  b.tokenizer = {
      {"normalizer", {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}},
      {"pre_tokenizer",
       {{"type", "Split"},
        {"pattern", {{"String", " "}}},
        {"behavior", "MergedWithPrevious"},
        {"invert", false}}},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                      {{"type", "ByteFallback"}},
                      {{"type", "Fuse"}}})}}},
      {"model", std::move(model)}};
  b.vocab = vocab.ids;
  b.class_specials = {"<unk>", "<bos>", "<eos>", "<pad>", "<mask>"};
  return b;
}

json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", true},
          {"use_regex", use_regex}};
}

// byte_level_tokenizer: GPT2Tokenizer(vocab with any token outside the byte alphabet respelled
// byte by byte, merges as the file gives them).
Built byte_level_bpe(const GgufFile& f, const Dict& d) {
  std::vector<std::string> spelled;
  spelled.reserve(d.tokens.size());
  for (const auto& t : d.tokens)
    spelled.push_back(is_byte_level_spelled(t) ? t : byte_level_spelling(t));
  const Vocab vocab(spelled);
  // get_merges without the file's merges reads the vocabulary as the file spells it.
  json merges = d.has_merges ? get_merges(f, d, vocab) : get_merges(f, d, Vocab(d.tokens));
  Built b;
  b.tokenizer = {{"normalizer", nullptr},
                 {"pre_tokenizer", byte_level(true)},
                 {"post_processor", nullptr},
                 {"decoder",
                  {{"type", "ByteLevel"},
                   {"add_prefix_space", true},
                   {"trim_offsets", true},
                   {"use_regex", true}}},
                 {"model", bpe(vocab.to_json(), std::move(merges), false)}};
  b.vocab = vocab.ids;
  b.class_specials = {"<|endoftext|>"};
  return b;
}

Built build(const GgufFile& f, const Dict& d) {
  // select_tokenizer_builder.
  if (d.type == "llama") {
    if (d.arch == "phi3") return phi3(f, d);
    if (d.arch == "gemma" || d.arch == "gemma2" || d.arch == "gemma3") return gemma(f, d);
    return sentencepiece(f, d);
  }
  if (d.type == "gpt2") return byte_level_bpe(f, d);
  throw bad(f, "tokenizer.ggml.model",
            d.type.empty() ? std::string("is missing")
                           : "is '" + d.type +
                                 "', which lm-eval does not build (transformers' "
                                 "builders: gemma4, gpt2, llama, t5; lm-eval: gpt2, llama)");
}

// The added tokens in the order transformers adds them: the class's defaults, the file's control
// tokens (special) and user-defined ones (not special), then the file's special tokens.
// A content not in the vocabulary gets the next id, as tokenizers' AddedVocabulary gives it.
class AddedTokens {
 public:
  explicit AddedTokens(const std::unordered_map<std::string, int64_t>& vocab) : vocab_(vocab) {}
  void add(const std::string& content, bool special) {
    if (content.empty() || seen_.count(content)) return;
    seen_.insert(content);
    int64_t id = 0;
    if (auto it = vocab_.find(content); it != vocab_.end())
      id = it->second;
    else
      id = static_cast<int64_t>(vocab_.size()) + fresh_++;
    list_.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  }
  bool known(const std::string& content) const {
    return vocab_.count(content) || seen_.count(content);
  }
  json list() const { return list_; }

 private:
  const std::unordered_map<std::string, int64_t>& vocab_;
  std::unordered_set<std::string> seen_;
  int64_t fresh_ = 0;
  json list_ = json::array();
};

GgufTokenizerJson tokenizer_json(const GgufFile& f) {
  const Dict d = read_dict(f);
  Built b = build(f, d);

  GgufTokenizerJson out;
  json& config = out.config;
  config = json::object();
  if (const GgufValue* t = f.find("tokenizer.chat_template")) {
    if (t->kind != GgufValue::Kind::kString)
      throw bad(f, "tokenizer.chat_template", "is not a string");
    config["chat_template"] = t->s;
  }
  for (const char* k : {"add_bos_token", "add_eos_token"}) {
    const std::string key = std::string("tokenizer.ggml.") + k;
    if (const GgufValue* v = f.find(key)) {
      if (v->kind != GgufValue::Kind::kBool) throw bad(f, key, "is not a bool");
      config[k] = v->b;
    }
  }
  // get_gguf_tokenizer: llama.cpp adds BOS to a sentencepiece vocabulary unless told otherwise.
  if (d.type == "llama" && !config.contains("add_bos_token")) config["add_bos_token"] = true;
  const std::array<std::pair<const char*, const char*>, 4> specials = {{
      {"bos_token", "tokenizer.ggml.bos_token_id"},
      {"eos_token", "tokenizer.ggml.eos_token_id"},
      {"unk_token", "tokenizer.ggml.unknown_token_id"},
      {"pad_token", "tokenizer.ggml.padding_token_id"},
  }};
  for (const auto& [name, key] : specials) {
    config[name] = nullptr;
    const GgufValue* v = f.find(key);
    if (!v) continue;
    if (v->kind != GgufValue::Kind::kUnsigned && v->kind != GgufValue::Kind::kSigned)
      throw bad(f, key, "is not an integer");
    const int64_t id = v->kind == GgufValue::Kind::kSigned ? v->i : static_cast<int64_t>(v->u);
    if (id < 0 || id >= static_cast<int64_t>(d.tokens.size()))
      throw bad(f, key,
                "is " + std::to_string(id) + ", outside tokenizer.ggml.tokens' " +
                    std::to_string(d.tokens.size()) + " tokens");
    config[name] = d.tokens[static_cast<size_t>(id)];
  }

  AddedTokens added(b.vocab);
  for (const auto& s : b.class_specials) added.add(s, true);
  // add_gguf_special_tokens: a control token of a byte-level vocabulary written outside the byte
  // alphabet is a llama.cpp mislabel, left out; a user-defined token only when in the vocabulary.
  const bool byte_level_vocab = d.type == "gpt2";
  const size_t typed = std::min(d.tokens.size(), d.token_type.size());
  for (size_t i = 0; i < typed; ++i)
    if (d.token_type[i] == kControl && (!byte_level_vocab || is_byte_level_spelled(d.tokens[i])))
      added.add(d.tokens[i], true);
  for (size_t i = 0; i < typed; ++i)
    if (d.token_type[i] == kUserDefined && added.known(d.tokens[i])) added.add(d.tokens[i], false);
  for (const auto& [name, key] : specials)
    if (config[name].is_string()) added.add(config[name].get<std::string>(), true);
  b.tokenizer["added_tokens"] = added.list();

  // set_split_regex.
  for (const auto& [pre, regex] : kPreSplits)
    if (d.pre == pre)
      b.tokenizer["pre_tokenizer"] = {
          {"type", "Sequence"},
          {"pretokenizers", json::array({{{"type", "Split"},
                                          {"pattern", {{"Regex", regex}}},
                                          {"behavior", "Isolated"},
                                          {"invert", false}},
                                         byte_level(false)})}};
  b.tokenizer["truncation"] = nullptr;
  b.tokenizer["padding"] = nullptr;
  out.tokenizer = std::move(b.tokenizer);
  return out;
}

}  // namespace gguf_tokenizer_impl

GgufTokenizerJson gguf_tokenizer_json(const GgufFile& f) {
  return gguf_tokenizer_impl::tokenizer_json(f);
}

std::unique_ptr<Tokenizer> gguf_tokenizer(const GgufFile& f) {
  const GgufTokenizerJson t = gguf_tokenizer_json(f);
  return tokenizer_from_json(t.tokenizer, t.config, f.path().string() + " (tokenizer.* metadata)");
}

}  // namespace lmeval::hf

// The tokenizer.json pipeline (added tokens, normalizer, pre-tokenizer, model, post-processor,
// decoder), tokenizer_config.json, and load_tokenizer().
#include "tokenizer/hf_tokenizer.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

std::string read_whole(const std::filesystem::path& p) {
  return read_input_file(p, "tokenizer file", "a tokenizer file");
}

// Tracks the JSON path while parsing, so a syntax error can say where it happened.
class PathSax : public nlohmann::json_sax<Json> {
 public:
  std::string path() const {
    std::string p = "$";
    for (const auto& f : stack_) {
      if (f.is_array)
        p += "[" + std::to_string(f.index) + "]";
      else if (f.has_key)
        p += "." + f.key;
    }
    return p;
  }
  size_t error_pos = 0;
  std::string error_message;

  bool null() override { return done(); }
  bool boolean(bool) override { return done(); }
  bool number_integer(number_integer_t) override { return done(); }
  bool number_unsigned(number_unsigned_t) override { return done(); }
  bool number_float(number_float_t, const string_t&) override { return done(); }
  bool string(string_t&) override { return done(); }
  bool binary(binary_t&) override { return done(); }
  bool start_object(std::size_t) override {
    stack_.push_back(Frame{});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = k;
    stack_.back().has_key = true;
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return done();
  }
  bool start_array(std::size_t) override {
    stack_.push_back(Frame{true, 0, false, {}});
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return done();
  }
  bool parse_error(std::size_t pos, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_pos = pos;
    error_message = ex.what();
    return false;
  }

 private:
  struct Frame {
    bool is_array = false;
    size_t index = 0;
    bool has_key = false;
    std::string key;
  };
  bool done() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
    return true;
  }
  std::vector<Frame> stack_;
};

Json parse_json_file(const std::filesystem::path& p) {
  std::string text = read_whole(p);
  require_json_nesting(text, p.string());
  try {
    return Json::parse(text);
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, text, p.string());
  } catch (const Json::parse_error&) {
    PathSax sax;
    Json::sax_parse(text, &sax);
    size_t pos = std::min(sax.error_pos, text.size());
    int line = 1, col = 1;
    for (size_t i = 0; i + 1 < pos; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = pos >= text.size() ? "truncated or malformed JSON (unexpected end of file)"
                                          : "malformed JSON";
    throw UserError(what + " in " + p.filename().string() + ": " + sax.error_message,
                    SourceLocation{p.string(), line, col, sax.path()});
  }
}

std::optional<std::string> token_text(const Json& j, const Where& w) {
  if (j.is_null()) return std::nullopt;
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content")) return req_string(j, w, "content");
  fail(w, "expected a token string, {\"content\": ...} or null");
}

bool ends_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t k = s.size() - 1;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xc0) == 0x80) --k;
  return is_word_char(next_cp(s, k));
}

bool starts_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0;
  return is_word_char(next_cp(s, i));
}

// Start of the whitespace run that ends `s`.
size_t leftmost_space_at_end(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t k = end - 1;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xc0) == 0x80) --k;
    size_t i = k;
    if (!is_whitespace(next_cp(s, i))) break;
    end = k;
  }
  return end;
}

// Length of the whitespace run that starts `s`.
size_t space_at_start(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t k = i;
    if (!is_whitespace(next_cp(s, k))) break;
    i = k;
  }
  return i;
}

}  // namespace

// ---- tokenizer_config.json ----

TokenizerConfig TokenizerConfig::from_json(const Json& j, const Where& w) {
  TokenizerConfig c;
  expect_object(j, w);
  if (j.contains("add_bos_token") && !j["add_bos_token"].is_null()) {
    c.add_bos_token = opt_bool(j, w, "add_bos_token", false);
  }
  if (j.contains("add_eos_token") && !j["add_eos_token"].is_null()) {
    c.add_eos_token = opt_bool(j, w, "add_eos_token", false);
  }
  if (j.contains("legacy") && !j["legacy"].is_null()) c.legacy = opt_bool(j, w, "legacy", true);
  c.clean_up_tokenization_spaces = opt_bool(j, w, "clean_up_tokenization_spaces", false);
  if (j.contains("bos_token")) c.bos = token_text(j["bos_token"], w / "bos_token");
  if (j.contains("eos_token")) c.eos = token_text(j["eos_token"], w / "eos_token");
  if (j.contains("pad_token")) c.pad = token_text(j["pad_token"], w / "pad_token");
  if (j.contains("unk_token")) c.unk = token_text(j["unk_token"], w / "unk_token");
  if (j.contains("chat_template") && !j["chat_template"].is_null()) {
    const Json& ct = j["chat_template"];
    Where cw = w / "chat_template";
    c.chat_template_source = w.file + " $.chat_template";
    if (ct.is_string()) {
      c.chat_templates["default"] = ct.get<std::string>();
    } else if (ct.is_array()) {
      c.named_chat_templates = true;
      for (size_t i = 0; i < ct.size(); ++i) {
        c.chat_templates[req_string(ct[i], cw[i], "name")] = req_string(ct[i], cw[i], "template");
      }
    } else {
      fail(cw, "expected a string or a list of {name, template}");
    }
  }
  if (j.contains("model_max_length") && !j["model_max_length"].is_null()) {
    const Json& m = j["model_max_length"];
    if (!m.is_number()) fail(w / "model_max_length", "expected a number");
    // transformers writes VERY_LARGE_INTEGER (1e30) for "no limit": treated as unset.
    double d = m.get<double>();
    if (d < 1e18)
      c.model_max_length = m.is_number_integer() ? m.get<int64_t>() : static_cast<int64_t>(d);
  }
  if (j.contains("added_tokens_decoder") && j["added_tokens_decoder"].is_object()) {
    Where aw = w / "added_tokens_decoder";
    for (auto it = j["added_tokens_decoder"].begin(); it != j["added_tokens_decoder"].end(); ++it) {
      TokenId id = 0;
      try {
        id = static_cast<TokenId>(std::stol(it.key()));
      } catch (const std::exception&) {
        fail(aw / it.key(), "added_tokens_decoder keys must be token ids");
      }
      auto text = token_text(it.value(), aw / it.key());
      if (text) c.added_tokens.emplace_back(id, *text);
    }
  }
  return c;
}

TokenizerConfig TokenizerConfig::load(const std::filesystem::path& dir) {
  TokenizerConfig c;
  auto cfg_path = dir / "tokenizer_config.json";
  if (std::filesystem::exists(cfg_path))
    c = from_json(parse_json_file(cfg_path), Where{cfg_path.string(), "$"});
  auto map_path = dir / "special_tokens_map.json";
  if (std::filesystem::exists(map_path)) {
    Json j = parse_json_file(map_path);
    Where w{map_path.string(), "$"};
    expect_object(j, w);
    auto fill = [&](std::optional<std::string>& slot, const char* key) {
      if (!slot && j.contains(key)) slot = token_text(j[key], w / key);
    };
    fill(c.bos, "bos_token");
    fill(c.eos, "eos_token");
    fill(c.pad, "pad_token");
    fill(c.unk, "unk_token");
  }
  auto jinja = dir / "chat_template.jinja";
  if (c.chat_templates.empty() && std::filesystem::exists(jinja)) {
    c.chat_templates["default"] = read_whole(jinja);
    c.chat_template_source = jinja.string();
  }
  return c;
}

std::string TokenizerBase::chat_template(std::string_view name) const {
  // TemplateLM.chat_template: a name picks one of a list of templates; a tokenizer with one
  // template gives that one whatever the name (the reference warns that it ignores the name).
  std::string key = name.empty() || !config_.named_chat_templates ? "default" : std::string(name);
  auto it = config_.chat_templates.find(key);
  if (it != config_.chat_templates.end()) return it->second;
  if (config_.named_chat_templates) {
    // TemplateLM.chat_template raises ValueError for a list of templates without that name (or,
    // with no name, without "default"), naming the sorted names.
    std::string names;
    for (const auto& [n, t] : config_.chat_templates)
      names += (names.empty() ? "'" : ", '") + n + "'";
    std::string message =
        name.empty() ? "this tokenizer has several chat templates and none is "
                       "named 'default'"
                     : "chat template '" + std::string(name) + "' is not one of this tokenizer's";
    throw UserError(message + " (available: [" + names + "])", {"", 0, 0, "--apply_chat_template"},
                    "one of the template names [" + names + "]");
  }
  return {};
}

void TokenizerBase::apply_config(TokenizerConfig config) {
  config_ = std::move(config);
  auto resolve = [&](SpecialToken& t, const std::optional<std::string>& text) {
    t = SpecialToken{};
    if (!text) return;
    t.text = *text;
    t.id = token_to_id(*text);
  };
  resolve(bos_, config_.bos);
  resolve(eos_, config_.eos);
  resolve(pad_, config_.pad);
  resolve(unk_, config_.unk);
}

// ---- added tokens ----

void TokenTrie::add(const std::string& s, size_t token_index) {
  if (s.empty()) return;
  int node = 0;
  for (unsigned char c : s) {
    auto& next = nodes_[static_cast<size_t>(node)].next;
    auto it = std::find_if(next.begin(), next.end(), [c](const auto& p) { return p.first == c; });
    if (it != next.end()) {
      node = it->second;
    } else {
      int n = static_cast<int>(nodes_.size());
      nodes_[static_cast<size_t>(node)].next.emplace_back(c, n);
      nodes_.emplace_back();
      node = n;
    }
  }
  // The first token registered under a string wins, as in HF's map from content to id.
  if (nodes_[static_cast<size_t>(node)].token < 0) {
    nodes_[static_cast<size_t>(node)].token = static_cast<int64_t>(token_index);
  }
  first_[static_cast<unsigned char>(s[0])] = true;
}

size_t TokenTrie::longest_at(std::string_view text, size_t pos, size_t& index) const {
  size_t best = 0;
  int node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    const auto& next = nodes_[static_cast<size_t>(node)].next;
    int found = -1;
    for (const auto& p : next) {
      if (p.first == c) {
        found = p.second;
        break;
      }
    }
    if (found < 0) break;
    node = found;
    if (nodes_[static_cast<size_t>(node)].token >= 0) {
      best = i + 1 - pos;
      index = static_cast<size_t>(nodes_[static_cast<size_t>(node)].token);
    }
  }
  return best;
}

// ---- HfTokenizer ----

HfTokenizer::HfTokenizer(const std::filesystem::path& json_path, TokenizerConfig config) {
  try {
    build(parse_json_file(json_path), Where{json_path.string(), "$"}, std::move(config));
  } catch (const Json::exception& e) {
    // A shape the explicit checks missed: still bad input, not a crash.
    throw UserError(std::string("unexpected content in tokenizer.json: ") + e.what(),
                    SourceLocation{json_path.string(), 0, 0, {}});
  }
}

HfTokenizer::HfTokenizer(const Json& j, const std::string& source, TokenizerConfig config) {
  try {
    build(j, Where{source, "$"}, std::move(config));
  } catch (const Json::exception& e) {
    throw UserError(std::string("unexpected content in the tokenizer: ") + e.what(),
                    SourceLocation{source, 0, 0, {}});
  }
}

void HfTokenizer::build(const Json& j, const Where& root, TokenizerConfig config) {
  expect_object(j, root);
  normalizer_ = make_normalizer(j.value("normalizer", Json()), root / "normalizer");
  pre_tokenizer_ = make_pre_tokenizer(j.value("pre_tokenizer", Json()), root / "pre_tokenizer");
  model_ = make_model(req(j, root, "model"), root / "model");
  post_processor_ =
      make_post_processor(j.value("post_processor", Json()), root / "post_processor", *model_);
  decoder_ = make_decoder(j.value("decoder", Json()), root / "decoder");

  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    const Json& at = j["added_tokens"];
    Where aw = root / "added_tokens";
    if (!at.is_array()) fail(aw, "expected an array of added tokens");
    for (size_t i = 0; i < at.size(); ++i) {
      const Json& t = at[i];
      Where tw = aw[i];
      AddedToken a;
      int64_t id = opt_int(t, tw, "id", -1);
      if (id < 0) fail(tw / "id", "added token needs a non-negative integer id");
      a.id = static_cast<TokenId>(id);
      a.content = req_string(t, tw, "content");
      a.special = opt_bool(t, tw, "special", false);
      a.single_word = opt_bool(t, tw, "single_word", false);
      a.lstrip = opt_bool(t, tw, "lstrip", false);
      a.rstrip = opt_bool(t, tw, "rstrip", false);
      a.normalized = opt_bool(t, tw, "normalized", !a.special);
      if (added_by_content_.count(a.content)) continue;
      size_t idx = added_.size();
      added_by_content_[a.content] = idx;
      added_by_id_.emplace(a.id, idx);
      if (a.special) special_contents_.insert(a.content);
      added_.push_back(std::move(a));
    }
  }
  for (size_t i = 0; i < added_.size(); ++i) {
    const AddedToken& a = added_[i];
    if (a.normalized) {
      std::string content = a.content;
      if (normalizer_) normalizer_->normalize(content);
      normalized_trie_.add(content, i);
    } else {
      raw_trie_.add(a.content, i);
    }
  }
  vocab_size_ = model_->vocab_size();
  for (const auto& a : added_) {
    if (!model_->token_to_id(a.content)) ++vocab_size_;
  }

  if (j.contains("truncation") && !j["truncation"].is_null()) {
    // HF would truncate every encoding; an evaluation needs the full sequence.
    fail(root / "truncation", "truncation in tokenizer.json is not supported (expected null)");
  }

  apply_config(std::move(config));
  // tokenizer_config.json's add_bos_token / add_eos_token rewrite the post-processor when they
  // disagree with it, as transformers' Llama-style fast tokenizers do.
  if (config_.add_bos_token || config_.add_eos_token) {
    std::vector<TokenId> probe;
    if (post_processor_) post_processor_->process(probe);
    bool has_bos = bos_.id && !probe.empty() && probe.front() == *bos_.id;
    bool has_eos =
        eos_.id && !probe.empty() && probe.back() == *eos_.id && (probe.size() > 1 || !has_bos);
    bool want_bos = config_.add_bos_token.value_or(has_bos) && bos_.id;
    bool want_eos = config_.add_eos_token.value_or(has_eos) && eos_.id;
    if (want_bos != has_bos || want_eos != has_eos) {
      std::vector<TokenId> prefix, suffix;
      if (want_bos) prefix.push_back(*bos_.id);
      if (want_eos) suffix.push_back(*eos_.id);
      post_processor_ = make_wrap_processor(std::move(prefix), std::move(suffix));
    }
  }
}

void HfTokenizer::split_added(const TokenTrie& trie, const Part& part,
                              std::vector<Part>& out) const {
  const std::string& s = part.text;
  size_t start_offset = 0;
  size_t pos = 0;
  auto push = [&](size_t b, size_t e, TokenId id) {
    if (e > b) out.push_back(Part{s.substr(b, e - b), part.at_start && b == 0, id});
  };
  while (pos < s.size()) {
    if (!trie.may_start(static_cast<unsigned char>(s[pos]))) {
      ++pos;
      continue;
    }
    size_t idx = 0;
    size_t len = trie.longest_at(s, pos, idx);
    if (len == 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + len;
    pos = stop;
    const AddedToken& t = added_[idx];
    if (t.single_word) {
      bool start_space = start == 0 || !ends_with_word(std::string_view(s).substr(0, start));
      bool stop_space = stop == s.size() || !starts_with_word(std::string_view(s).substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (t.lstrip) {
      start = std::max(leftmost_space_at_end(std::string_view(s).substr(0, start)), start_offset);
    }
    if (t.rstrip) {
      stop += space_at_start(std::string_view(s).substr(stop));
      pos = stop;
    }
    push(start_offset, start, -1);
    push(start, stop, t.id);
    start_offset = stop;
  }
  push(start_offset, s.size(), -1);
}

std::vector<TokenId> HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<TokenId> ids;
  std::vector<Part> parts;
  Part whole{utf8_lossy(text), true, -1};
  if (raw_trie_.empty()) {
    if (!whole.text.empty()) parts.push_back(std::move(whole));
  } else {
    split_added(raw_trie_, whole, parts);
  }
  std::vector<Part> parts2;
  for (auto& p : parts) {
    if (p.token >= 0) {
      parts2.push_back(std::move(p));
      continue;
    }
    if (normalizer_) normalizer_->normalize(p.text);
    if (p.text.empty()) continue;
    if (normalized_trie_.empty()) {
      parts2.push_back(std::move(p));
    } else {
      split_added(normalized_trie_, p, parts2);
    }
  }
  Splits splits;
  for (auto& p : parts2) {
    if (p.token >= 0) {
      ids.push_back(p.token);
      continue;
    }
    splits.clear();
    splits.push_back(Split{std::move(p.text), p.at_start});
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(splits);
    for (const auto& s : splits) model_->tokenize(s.text, ids);
  }
  if (add_special_tokens && post_processor_) post_processor_->process(ids);
  return ids;
}

std::string HfTokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (TokenId id : ids) {
    const std::string* t = nullptr;
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) {
      t = &added_[it->second].content;
    } else {
      t = model_->id_to_token(id);
    }
    if (!t) continue;
    if (skip_special_tokens && special_contents_.count(*t)) continue;
    tokens.push_back(*t);
  }
  std::string out;
  if (decoder_) {
    decoder_->decode_chain(tokens);
    for (const auto& t : tokens) out += t;
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
  }
  if (config_.clean_up_tokenization_spaces) out = clean_up_tokenization(std::move(out));
  return out;
}

std::optional<TokenId> HfTokenizer::token_to_id(std::string_view token) const {
  auto it = added_by_content_.find(std::string(token));
  if (it != added_by_content_.end()) return added_[it->second].id;
  return model_->token_to_id(token);
}

std::optional<std::string> HfTokenizer::id_to_token(TokenId id) const {
  auto it = added_by_id_.find(id);
  if (it != added_by_id_.end()) return added_[it->second].content;
  if (const std::string* t = model_->id_to_token(id)) return *t;
  return std::nullopt;
}

}  // namespace lmeval::tok

namespace lmeval {

std::string clean_up_tokenization(std::string text) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string_view f(from);
    std::string out;
    size_t prev = 0, pos;
    bool any = false;
    while ((pos = text.find(f, prev)) != std::string::npos) {
      any = true;
      out.append(text, prev, pos - prev);
      out += to;
      prev = pos + f.size();
    }
    if (!any) continue;
    out.append(text, prev, std::string::npos);
    text = std::move(out);
  }
  return text;
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) {
    throw UserError("tokenizer not found: " + path.string(),
                    SourceLocation{path.string(), 0, 0, {}},
                    "a tokenizer.json, a tokenizer.model, or a folder holding one");
  }
  fs::path dir = path, json, model;
  if (fs::is_directory(path)) {
    if (fs::exists(path / "tokenizer.json"))
      json = path / "tokenizer.json";
    else if (fs::exists(path / "tokenizer.model"))
      model = path / "tokenizer.model";
    else {
      throw UserError("no tokenizer.json or tokenizer.model in " + path.string(),
                      SourceLocation{path.string(), 0, 0, {}});
    }
  } else {
    dir = path.parent_path();
    if (dir.empty()) dir = ".";
    require_regular_input(path, "tokenizer file", "tokenizer.json or a sentencepiece model");
    std::ifstream in(path, std::ios::binary);
    char first = 0;
    while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
    }
    if (path.extension() == ".json" || first == '{')
      json = path;
    else
      model = path;
  }
  tok::TokenizerConfig config = tok::TokenizerConfig::load(dir);
  if (!json.empty()) return std::make_unique<tok::HfTokenizer>(json, std::move(config));
  return tok::make_sentencepiece_tokenizer(model, std::move(config));
}

std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& tokenizer,
                                               const nlohmann::json& tokenizer_config,
                                               const std::string& source) {
  tok::TokenizerConfig config =
      tok::TokenizerConfig::from_json(tokenizer_config, tok::Where{source, "$"});
  return std::make_unique<tok::HfTokenizer>(tokenizer, source, std::move(config));
}

}  // namespace lmeval

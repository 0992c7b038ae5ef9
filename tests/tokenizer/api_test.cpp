// Tokenizer API behaviour: bad input (JSON paths in errors, unsupported components, invalid
// UTF-8), tokenizer_config.json facts, batch encoding, and the `lm-eval tokenize` command.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "support/test_support.hpp"
#include "tokenizer/cached_tokenizer.hpp"

namespace {

using lmeval::TokenId;
using nlohmann::json;
namespace fs = std::filesystem;

fs::path synthetic(const std::string& name) {
  return lmeval::testing::source_dir() / "tests/tokenizer/goldens/synthetic" / name /
         "tokenizer.json";
}

fs::path write_temp(const std::string& name, const std::string& content) {
  fs::path dir = fs::temp_directory_path() / ("lmeval_tok_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

// Loads `content` as a tokenizer.json and returns the UserError it raises.
lmeval::UserError load_error(const std::string& content) {
  fs::path p = write_temp("bad.json", content);
  try {
    lmeval::load_tokenizer(p);
  } catch (const lmeval::UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no UserError for " << content.substr(0, 200);
  return lmeval::UserError("none");
}

std::string small_bpe() { return lmeval::testing::read_file(synthetic("syn-split-bytelevel")); }

TEST(TokenizerErrors, TruncatedJsonNamesThePath) {
  std::string full = small_bpe();
  size_t cut = full.find("\"merges\"");
  ASSERT_NE(cut, std::string::npos);
  auto e = load_error(full.substr(0, cut + 40));
  EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().field.rfind("$.model.merges[", 0), 0u) << e.where().field;
  EXPECT_GT(e.where().line, 0);
}

TEST(TokenizerErrors, MalformedJsonNamesThePath) {
  auto e = load_error(R"({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0,, }}})");
  EXPECT_EQ(e.where().field, "$.model.vocab.a") << e.what();
}

TEST(TokenizerErrors, WrongTypesNameThePath) {
  json j = json::parse(small_bpe());
  j["model"]["merges"][3] = 5;
  EXPECT_EQ(load_error(j.dump()).where().field, "$.model.merges[3]");
  j = json::parse(small_bpe());
  j["model"]["vocab"]["a"] = "x";
  EXPECT_EQ(load_error(j.dump()).where().field, "$.model.vocab.a");
  j = json::parse(small_bpe());
  j["pre_tokenizer"]["pretokenizers"][1]["behavior"] = "Sideways";
  EXPECT_EQ(load_error(j.dump()).where().field, "$.pre_tokenizer.pretokenizers[1].behavior");
  j = json::parse(small_bpe());
  j["model"].erase("merges");
  EXPECT_EQ(load_error(j.dump()).where().field, "$.model.merges");
  j = json::parse(small_bpe());
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  auto e = load_error(j.dump());
  EXPECT_EQ(e.where().field, "$.pre_tokenizer.pretokenizers[0].pattern.Regex") << e.what();
}

TEST(TokenizerErrors, UnsupportedComponentIsNamed) {
  json j = json::parse(small_bpe());
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  auto e = load_error(j.dump());
  EXPECT_NE(std::string(e.what()).find("Precompiled"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().field, "$.normalizer.type");
  j = json::parse(small_bpe());
  j["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  e = load_error(j.dump());
  EXPECT_NE(std::string(e.what()).find("UnicodeScripts"), std::string::npos) << e.what();
  j = json::parse(small_bpe());
  j["decoder"] = {{"type", "CTC"}};
  EXPECT_NE(std::string(load_error(j.dump()).what()).find("CTC"), std::string::npos);
  j = json::parse(small_bpe());
  j["model"]["type"] = "Wordy";
  EXPECT_NE(std::string(load_error(j.dump()).what()).find("Wordy"), std::string::npos);
}

TEST(TokenizerErrors, MissingAndGarbageFiles) {
  EXPECT_THROW(lmeval::load_tokenizer("/nonexistent/tokenizer.json"), lmeval::UserError);
  EXPECT_THROW(
      lmeval::load_tokenizer(write_temp("tokenizer.model", std::string("\xff\xff\x01", 3))),
      lmeval::UserError);
  EXPECT_THROW(lmeval::load_tokenizer(write_temp("empty.json", "")), lmeval::UserError);
}

// Rule: invalid UTF-8 is read with each maximal ill-formed subsequence replaced by U+FFFD.
TEST(TokenizerInput, InvalidUtf8BecomesReplacementCharacter) {
  auto tok = lmeval::load_tokenizer(synthetic("syn-split-bytelevel"));
  std::string bad =
      "ab\xff"
      "c\xe2\x82"
      "d\xed\xa0\x80"
      "e\xf0\x9f";
  std::string fixed =
      "ab\xef\xbf\xbd"
      "c\xef\xbf\xbd"
      "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
      "e\xef\xbf\xbd";
  EXPECT_EQ(tok->encode(bad, true), tok->encode(fixed, true));
  EXPECT_EQ(tok->decode(tok->encode(bad, false), false),
            tok->decode(tok->encode(fixed, false), false));
  EXPECT_NE(tok->decode(tok->encode(bad, false), false).find("\xef\xbf\xbd"), std::string::npos);
}

TEST(TokenizerInput, UnknownIdsAreDroppedInDecode) {
  auto tok = lmeval::load_tokenizer(synthetic("syn-split-bytelevel"));
  std::vector<TokenId> ids = tok->encode("Hello", false);
  std::vector<TokenId> with_bad = ids;
  with_bad.push_back(-5);
  with_bad.push_back(99999999);
  EXPECT_EQ(tok->decode(with_bad, false), tok->decode(ids, false));
}

TEST(TokenizerConfig, Gpt2Folder) {
  LMEVAL_REQUIRE_SHARED("tokenizers/gpt2");
  auto tok = lmeval::load_tokenizer(lmeval::testing::shared_dir() / "tokenizers/gpt2");
  EXPECT_EQ(tok->bos_token().text, "<|endoftext|>");
  EXPECT_EQ(tok->eos_token().id, 50256);
  EXPECT_EQ(tok->unk_token().id, 50256);
  EXPECT_FALSE(tok->pad_token().id.has_value());
  EXPECT_EQ(tok->model_max_length(), 1024);
  EXPECT_EQ(tok->vocab_size(), 50257u);
  EXPECT_EQ(tok->token_to_id("Hello"), 15496);
  EXPECT_EQ(tok->id_to_token(15496), "Hello");
  EXPECT_FALSE(tok->token_to_id("no such token at all").has_value());
  EXPECT_TRUE(tok->chat_template().empty());
  // tokenizer_config.json: clean_up_tokenization_spaces = true, applied by decode as transformers
  // does; the bare `tokenizers` decode would give "Hello , world . It 's".
  EXPECT_TRUE(tok->clean_up_tokenization_spaces());
  EXPECT_EQ(tok->decode(tok->encode("Hello , world . It 's", false), false), "Hello, world. It's");
}

TEST(TokenizerConfig, Qwen3AndMistralAndStories) {
  LMEVAL_REQUIRE_SHARED("tokenizers/qwen3");
  // A tokenizer.json path reads tokenizer_config.json beside it, as a folder path does.
  const auto* qwen = &lmeval::testing::cached_tokenizer(lmeval::testing::shared_dir() /
                                                        "tokenizers/qwen3/tokenizer.json");
  EXPECT_NE(qwen->chat_template().find("<|im_start|>"), std::string::npos);
  // One template: a name is ignored, as TemplateLM.chat_template ignores it (with a warning).
  EXPECT_EQ(qwen->chat_template("chatml"), qwen->chat_template());
  EXPECT_EQ(qwen->eos_token().id, 151645);
  EXPECT_EQ(qwen->pad_token().id, 151643);
  EXPECT_FALSE(qwen->bos_token().id.has_value());
  EXPECT_EQ(qwen->model_max_length(), 262144);
  EXPECT_EQ(qwen->vocab_size(), 151669u);
  const auto* neox = &lmeval::testing::cached_tokenizer(lmeval::testing::shared_dir() /
                                                        "tokenizers/gpt-neox-20b/tokenizer.json");
  EXPECT_EQ(neox->vocab_size(), 50277u);
  const auto* mistral = &lmeval::testing::cached_tokenizer(lmeval::testing::shared_dir() /
                                                           "tokenizers/mistral/tokenizer.json");
  EXPECT_EQ(mistral->encode("Hi", true).front(), 1);
  EXPECT_FALSE(mistral->model_max_length().has_value());  // 1e30 = no limit
  const auto* llama = &lmeval::testing::cached_tokenizer(lmeval::testing::shared_dir() /
                                                         "tokenizers/llama-3/tokenizer.json");
  EXPECT_EQ(llama->bos_token().id, 128000);
  EXPECT_EQ(llama->encode("Hi", true).front(), 128000);
}

TEST(TokenizerConfig, AddBosEosAndNamedTemplates) {
  fs::path dir = write_temp("tokenizer.json", small_bpe()).parent_path();
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"add_bos_token": true, "add_eos_token": true, "bos_token": "<|endoftext|>",
            "eos_token": {"content": "<|endoftext|>", "special": true},
            "chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use",
            "template": "T"}], "model_max_length": 77})";
  auto tok = lmeval::load_tokenizer(dir);
  auto ids = tok->encode("Hello", true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 0);
  EXPECT_EQ(tok->chat_template(), "D");
  EXPECT_EQ(tok->chat_template("tool_use"), "T");
  // TemplateLM.chat_template raises ValueError here ("... is not available. Available template
  // names are ['default', 'tool_use']."): exit 2 naming the flag and the names.
  try {
    (void)tok->chat_template("no_such_template");
    ADD_FAILURE() << "an unknown template name was accepted";
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().field, "--apply_chat_template");
    EXPECT_NE(std::string(e.what()).find("'default', 'tool_use'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tok->model_max_length(), 77);
  // Several templates, none named "default": asking for the default raises as the reference's
  // TemplateLM.chat_template does ("... multiple chat templates with no default specified!").
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "rag",
            "template": "R"}]})";
  auto no_default = lmeval::load_tokenizer(dir);
  EXPECT_EQ(no_default->chat_template("rag"), "R");
  EXPECT_THROW((void)no_default->chat_template(), lmeval::UserError);
  fs::remove(dir / "tokenizer_config.json");
}

TEST(TokenizerBatch, ThreadsGiveTheSameIds) {
  auto tok = lmeval::load_tokenizer(synthetic("syn-bytefallback"));
  std::vector<std::string> texts;
  for (int i = 0; i < 500; ++i) texts.push_back("text number " + std::to_string(i * 7919) + " é中");
  auto par = lmeval::encode_batch(*tok, texts, true, 4);
  ASSERT_EQ(par.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(par[i], tok->encode(texts[i], true));
}

TEST(TokenizeCommand, JsonlRoundTrip) {
  fs::path in = write_temp("in.jsonl", "\"Hello world\"\n\"<|endoftext|> x\\n\"\n");
  std::string base = lmeval::testing::lmeval_binary().string() + " tokenize --tokenizer " +
                     synthetic("syn-split-bytelevel").string();
  auto r = lmeval::testing::run_command(base + " --jsonl --add_special_tokens " + in.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tok = lmeval::load_tokenizer(synthetic("syn-split-bytelevel"));
  std::string want = json(tok->encode("Hello world", true)).dump() + "\n" +
                     json(tok->encode("<|endoftext|> x\n", true)).dump() + "\n";
  EXPECT_EQ(r.out, want);
  fs::path ids = write_temp("ids.jsonl", r.out);
  auto d = lmeval::testing::run_command(base + " --jsonl --decode " + ids.string());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, json(tok->decode(tok->encode("Hello world", true), false)).dump() + "\n" +
                       json(tok->decode(tok->encode("<|endoftext|> x\n", true), false)).dump() +
                       "\n");
  auto plain = lmeval::testing::run_command("printf 'Hello world\\n' | " + base);
  EXPECT_EQ(plain.exit_code, 0);
  std::string want_plain;
  for (TokenId id : tok->encode("Hello world", false)) {
    want_plain += (want_plain.empty() ? "" : " ") + std::to_string(id);
  }
  EXPECT_EQ(plain.out, want_plain + "\n");
  auto bad = lmeval::testing::run_command(base + " --jsonl " +
                                          write_temp("bad.jsonl", "not json\n").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace

// The tokenizer a GGUF file's metadata describes (gguf_file= without tokenizer=) against
// transformers' AutoTokenizer.from_pretrained(folder, gguf_file=...) on a sample of the shared
// tokenizer corpus, and the reference's HFLM scoring with it (tests/fixtures/gguf,
// scripts/gen_gguf_fixtures.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lmeval/core/error.hpp"
#include "models/hf/gguf_test_support.hpp"
#include "models/hf/gguf_tokenizer.hpp"
#include "models/hf/hf_lm.hpp"

namespace lmeval::hf {
namespace {

std::string special_text(const SpecialToken& t) { return t.id ? t.text : "null"; }

TEST(GgufTokenizer, EncodesAndDecodesAsTransformers) {
  const json golden = read_json(fixtures() / "tokenizer_golden.json");
  const auto strings = golden["strings"].get<std::vector<std::string>>();
  for (const auto& [name, g] : golden["files"].items()) {
    const auto tok = gguf_tokenizer(GgufFile(fixtures() / (name + ".gguf")));
    EXPECT_EQ(tok->vocab_size(), g["vocab_size"].get<size_t>()) << name;
    const json& sp = g["special"];
    EXPECT_EQ(special_text(tok->bos_token()), sp["bos_token"].is_null() ? "null" : sp["bos_token"]);
    EXPECT_EQ(special_text(tok->eos_token()), sp["eos_token"].is_null() ? "null" : sp["eos_token"]);
    EXPECT_EQ(special_text(tok->unk_token()), sp["unk_token"].is_null() ? "null" : sp["unk_token"]);
    EXPECT_EQ(special_text(tok->pad_token()), sp["pad_token"].is_null() ? "null" : sp["pad_token"]);
    EXPECT_EQ(tok->chat_template(),
              g["chat_template"].is_null() ? "" : g["chat_template"].get<std::string>());
    int bad = 0;
    for (size_t i = 0; i < strings.size() && bad < 5; ++i) {
      const auto ids = g["ids"][i].get<std::vector<TokenId>>();
      const bool ok =
          tok->encode(strings[i], true) == ids &&
          tok->encode(strings[i], false) == g["ids_no_special"][i].get<std::vector<TokenId>>() &&
          tok->decode(ids, false) == g["decoded"][i].get<std::string>() &&
          tok->decode(ids, true) == g["decoded_skip_special"][i].get<std::string>();
      if (!ok) {
        ++bad;
        ADD_FAILURE() << name << " string " << i << ": '" << strings[i] << "'";
      }
    }
  }
}

// Hand-made files: a minimal sentencepiece vocabulary and each way the metadata can be wrong.
MiniGguf sentencepiece_file() {
  MiniGguf g = MiniGguf::llama();
  g.text("tokenizer.ggml.model", "llama")
      .texts("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\u2581", "a", "\u2581a"})
      .i32s("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
  return g;
}

TEST(GgufTokenizer, MergesComeFromTheScoresWhenTheFileHasNone) {
  MiniGguf g = sentencepiece_file();
  // No scores: transformers' generate_merges would have none to sort by.
  std::string m =
      expect_user_error([&] { gguf_tokenizer(GgufFile(temp_file("noscores.gguf", g.bytes()))); });
  EXPECT_NE(m.find("tokenizer.ggml.scores"), std::string::npos) << m;
  g.u32("tokenizer.ggml.bos_token_id", 1);
  MiniGguf::str(g.kv, "tokenizer.ggml.scores");
  MiniGguf::put<uint32_t>(g.kv, 9);
  MiniGguf::put<uint32_t>(g.kv, 6);  // FLOAT32
  MiniGguf::put<uint64_t>(g.kv, 6);
  for (float s : {0.f, 0.f, 0.f, -1.f, -2.f, -0.5f}) MiniGguf::put<float>(g.kv, s);
  ++g.n_kv;
  const auto tok = gguf_tokenizer(GgufFile(temp_file("scores.gguf", g.bytes())));
  // "▁a" merges from "▁" + "a"; BOS added (llama.cpp's default for a sentencepiece file).
  EXPECT_EQ(tok->encode("a a", true), (std::vector<TokenId>{1, 5, 5}));
  EXPECT_EQ(tok->decode(std::vector<TokenId>{1, 5, 5}, true), "a a");
}

TEST(GgufTokenizer, BadMetadataIsNamed) {
  auto msg = [](const std::string& name, const MiniGguf& g) {
    const fs::path p = temp_file(name, g.bytes());
    const std::string m = expect_user_error([&] { gguf_tokenizer(GgufFile(p)); });
    EXPECT_NE(m.find(p.string()), std::string::npos) << m;
    return m;
  };
  EXPECT_NE(msg("notok.gguf", MiniGguf::llama()).find("tokenizer.ggml.tokens"), std::string::npos);
  MiniGguf t5 = MiniGguf::llama();
  t5.text("tokenizer.ggml.model", "t5").texts("tokenizer.ggml.tokens", {"a"});
  EXPECT_NE(msg("t5.gguf", t5).find("is 't5'"), std::string::npos);
  MiniGguf none = MiniGguf::llama();
  none.texts("tokenizer.ggml.tokens", {"a"});
  EXPECT_NE(msg("nomodel.gguf", none).find("tokenizer.ggml.model' is missing"), std::string::npos);
  MiniGguf bos = MiniGguf::llama();
  bos.text("tokenizer.ggml.model", "gpt2")
      .texts("tokenizer.ggml.tokens", {"a"})
      .texts("tokenizer.ggml.merges", {})
      .u32("tokenizer.ggml.bos_token_id", 7);
  EXPECT_NE(msg("bos.gguf", bos).find("outside tokenizer.ggml.tokens' 1 tokens"),
            std::string::npos);
  MiniGguf merge = MiniGguf::llama();
  merge.text("tokenizer.ggml.model", "gpt2")
      .texts("tokenizer.ggml.tokens", {"a"})
      .texts("tokenizer.ggml.merges", {"a"});
  EXPECT_NE(msg("merge.gguf", merge).find("not two tokens"), std::string::npos);
  // A vocabulary that builds (sentencepiece_file() has no scores, refused before the flags).
  MiniGguf flag = MiniGguf::llama();
  flag.text("tokenizer.ggml.model", "gpt2")
      .texts("tokenizer.ggml.tokens", {"a"})
      .texts("tokenizer.ggml.merges", {})
      .u32("tokenizer.ggml.add_bos_token", 1);
  EXPECT_NE(msg("flag.gguf", flag).find("add_bos_token' is not a bool"), std::string::npos);
}

TEST(GgufTokenizer, HflmWithoutTokenizerScoresAsTheReference) {
  const json golden = read_json(fixtures() / "golden.json");
  for (const auto& [name, g] : golden["models"].items()) {
    if (!g.contains("own_tokenizer_requests")) continue;  // the files without a tokenizer
    HFLM lm(parse_hf_args(
        Json{{"pretrained", fixtures().string()}, {"gguf_file", name + ".gguf"}, {"device", "cpu"}},
        {}));
    std::vector<LoglikelihoodRequest> reqs;
    const json& want = g["own_tokenizer_requests"];
    for (const auto& r : want) {
      reqs.push_back({r["context"].get<std::string>(), r["continuation"].get<std::string>()});
      auto [ctx, cont] = lm.encode_request(reqs.back());
      ctx.insert(ctx.end(), cont.begin(), cont.end());
      EXPECT_EQ(ctx, r["ids"].get<std::vector<Token>>()) << name;
    }
    const auto res = lm.loglikelihood(reqs);
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_NEAR(res[i].loglikelihood, want[i]["logprob"].get<double>(), 1e-4) << name;
      EXPECT_EQ(res[i].is_greedy, want[i]["is_greedy"].get<bool>()) << name;
    }
  }
}

}  // namespace
}  // namespace lmeval::hf

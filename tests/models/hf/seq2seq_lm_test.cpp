// HFLM's seq2seq backend: the backend chosen from config.json or backend=, the requests encoded
// as the reference's TemplateLM and HFLM encode them for seq2seq, and the answers of the
// reference itself on the T5 fixtures (reference.json, scripts/gen_hf_seq2seq_fixtures.py).
#include "models/hf/seq2seq_lm.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path fixture(const std::string& name) {
  return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / name;
}

std::unique_ptr<LM> make(const std::string& name, Json extra = Json::object()) {
  Json args = {{"pretrained", fixture(name).string()}, {"device", "cpu"}, {"dtype", "float32"}};
  for (auto& [k, v] : extra.items()) args[k] = v;
  return make_hf_model(args, {});
}

class Seq2SeqReferenceTest : public ::testing::TestWithParam<std::string> {};

// Loglikelihood (trailing space, empty context, a context starting with </s>, a context longer
// than max_length), rolling windows and generate_until as the reference answered them.
TEST_P(Seq2SeqReferenceTest, AnswersAsTheReference) {
  const json ref = json::parse(lmeval::testing::read_file(fixture(GetParam()) / "reference.json"));
  for (const char* bs : {"1", "4"}) {
    auto lm = make(GetParam(), {{"max_length", ref["max_length"]}, {"batch_size", bs}});
    ASSERT_NE(dynamic_cast<Seq2SeqLM*>(lm.get()), nullptr);
    std::vector<LoglikelihoodRequest> ll;
    for (const auto& r : ref["requests"]["loglikelihood"])
      ll.push_back({r[0].get<std::string>(), r[1].get<std::string>()});
    auto got = lm->loglikelihood(ll);
    for (size_t i = 0; i < ll.size(); ++i) {
      EXPECT_NEAR(got[i].loglikelihood, ref["loglikelihood"][i][0].get<double>(), 1e-4)
          << "request " << i << " batch_size " << bs;
      EXPECT_EQ(got[i].is_greedy, ref["loglikelihood"][i][1].get<bool>()) << "request " << i;
    }
    std::vector<std::string> texts = ref["requests"]["rolling"].get<std::vector<std::string>>();
    auto roll = lm->loglikelihood_rolling(texts);
    for (size_t i = 0; i < texts.size(); ++i) {
      const double want = ref["rolling"][i].get<double>();
      EXPECT_NEAR(roll[i], want, 1e-5 * std::abs(want)) << "rolling " << i;
    }
    if (std::string(bs) != "1") continue;  // the batch decides how long a seq2seq generation runs
    std::vector<GenerationRequest> gen;
    for (const auto& r : ref["requests"]["generate"])
      gen.push_back({r[0].get<std::string>(), Json::parse(r[1].dump())});
    auto texts_out = lm->generate_until(gen);
    for (size_t i = 0; i < gen.size(); ++i)
      EXPECT_EQ(texts_out[i], ref["generate"][i].get<std::string>()) << "generation " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(HfSeq2SeqReference, Seq2SeqReferenceTest,
                         ::testing::Values("t5", "flan_t5"));

TEST(HfSeq2Seq, EncodesAsTemplateLMForSeq2Seq) {
  Seq2SeqLM lm(parse_hf_args(Json{{"pretrained", fixture("t5").string()}, {"device", "cpu"}}, {}),
               fixture("t5"));
  const Tokenizer& tok = lm.tokenizer();
  const Token eos = 1;
  EXPECT_EQ(lm.prefix_token_id(), eos);  // no BOS: the EOS
  EXPECT_EQ(lm.max_length(), 512);       // config.json's n_positions
  // The context with the tokenizer's </s>, the continuation without; trailing space moves.
  auto [ctx, cont] = lm.encode_request({"Once upon a time ", "there"});
  std::vector<Token> want_ctx = tok.encode("Once upon a time", false);
  want_ctx.push_back(eos);
  EXPECT_EQ(ctx, want_ctx);
  EXPECT_EQ(cont, tok.encode(" there", false));
  // Empty context: the prefix token alone.
  auto [ectx, econt] = lm.encode_request({"", "Once"});
  EXPECT_EQ(ectx, std::vector<Token>{eos});
  EXPECT_EQ(econt, tok.encode("Once", false));
  // A context that starts with the prefix token's text gets no special tokens.
  EXPECT_EQ(lm.tok_encode("</s>Lily"), tok.encode("</s>Lily", false));
}

TEST(HfSeq2Seq, BackendFromConfigOrArgument) {
  HfArgs a = parse_hf_args(Json{{"pretrained", "x"}}, {});
  EXPECT_EQ(a.backend, "default");
  EXPECT_TRUE(uses_seq2seq_backend(a, fixture("t5")));
  EXPECT_FALSE(uses_seq2seq_backend(a, lmeval::testing::shared_dir() / "models" / "stories260K"));
  a.backend = "causal";
  EXPECT_FALSE(uses_seq2seq_backend(a, fixture("t5")));
  a.backend = "seq2seq";
  EXPECT_TRUE(uses_seq2seq_backend(a, lmeval::testing::shared_dir() / "models" / "stories260K"));
  EXPECT_EQ(parse_hf_args(Json{{"pretrained", "x"}, {"backend", "seq2seq"}}, {}).backend,
            "seq2seq");
  EXPECT_THROW(parse_hf_args(Json{{"pretrained", "x"}, {"backend", "encoder"}}, {}), UserError);
}

void expect_user_error(const std::function<void()>& f, const std::string& what) {
  try {
    f();
    FAIL() << "no error, expected: " << what;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(HfSeq2Seq, WrongBackendOrUnsupportedArgumentsRefused) {
  LMEVAL_REQUIRE_SHARED("models/stories260K");
  // A decoder-only model forced to seq2seq: AutoModelForSeq2SeqLM has no class for it either.
  const std::string stories = (lmeval::testing::shared_dir() / "models" / "stories260K").string();
  expect_user_error(
      [&] {
        make_hf_model(Json{{"pretrained", stories}, {"backend", "seq2seq"}}, {});
      },
      "model_type 'llama' has no native encoder-decoder");
  // T5 forced to causal: no decoder-only T5.
  expect_user_error(
      [&] {
        make("t5", {{"backend", "causal"}});
      },
      "architecture 'T5ForConditionalGeneration' has no native implementation");
  expect_user_error(
      [&] {
        make("t5", {{"peft", fixture("t5").string()}});
      },
      "peft is not supported for encoder-decoder");
}

TEST(HfSeq2Seq, ContinuationLongerThanMaxLengthRefused) {
  auto lm = make("t5", {{"max_length", 4}});
  expect_user_error([&] { lm->loglikelihood({{"a", " b c d e f g h i j"}}); }, "max_length");
}

}  // namespace
}  // namespace lmeval::hf

// Request bodies and results against the reference's own: goldens/reference_payloads.json holds
// what lm-eval 0.4.13's LocalCompletionsAPI / LocalChatCompletion sent to and made of the same
// stand-in server (scripts/gen_api_goldens.py).
#include "models/api/openai_payload.hpp"

#include <gtest/gtest.h>

#include "models/api/api_lm.hpp"
#include "models/api/fake_server.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

using test::FakeReply;
using test::FakeServer;

const Json& goldens() {
  static const Json g = Json::parse(testing::read_file(
      testing::source_dir() / "tests/models/api/goldens/reference_payloads.json"));
  return g;
}

// The stand-in of the goldens: completions as in fake_server.hpp, chat as gen_api_goldens.py.
FakeReply stand_in(const Json& b, const Tokenizer* tok) {
  if (b.contains("messages")) {
    std::string text = "<think>hmm</think>  " + b["messages"].back()["content"].get<std::string>();
    return {200,
            Json{{"choices",
                  Json::array({Json{{"index", 0},
                                    {"message", {{"role", "assistant"}, {"content", text}}}}})}}
                .dump()};
  }
  return test::completions(b, tok);
}

void expect_same_bodies(const std::vector<Json>& ours, const Json& reference,
                        const std::string& what) {
  ASSERT_EQ(ours.size(), reference.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i) {
    // Field order too: the reference builds each body as a dict literal.
    EXPECT_EQ(ours[i].dump(), reference[i].dump()) << what << " body " << i;
  }
}

class ApiPayload_Reference : public ::testing::TestWithParam<size_t> {};

TEST_P(ApiPayload_Reference, SameBodiesAndResults) {
  const Json& c = goldens()["configs"][GetParam()];
  SCOPED_TRACE(c["name"].get<std::string>());
  auto tok = load_tokenizer(testing::source_dir() / "models" / "stories260K");
  FakeServer server([&](const std::string&, const Json& b, int) { return stand_in(b, tok.get()); });
  Json args = c["model_args"];
  args["model"] = "stories";
  args["base_url"] = server.url();
  args["tokenizer"] = (testing::source_dir() / "models" / "stories260K").string();
  args["tokenizer_backend"] = "huggingface";
  ApiLM lm(parse_api_args(ApiKind::kLocalCompletions, args, {}),
           load_tokenizer(testing::source_dir() / "models" / "stories260K"));
  lm.keep_payloads(true);

  const Json& ll = c["loglikelihood"];
  std::vector<LoglikelihoodRequest> reqs;
  for (const auto& r : ll["requests"])
    reqs.push_back({r[0].get<std::string>(), r[1].get<std::string>()});
  auto res = lm.loglikelihood(reqs);
  expect_same_bodies(lm.payloads(), ll["payloads"], "loglikelihood");
  for (size_t i = 0; i < res.size(); ++i) {
    EXPECT_EQ(res[i].loglikelihood, ll["results"][i][0].get<double>()) << "loglikelihood " << i;
    EXPECT_EQ(res[i].is_greedy, ll["results"][i][1].get<bool>()) << "loglikelihood " << i;
  }

  const Json& roll = c["loglikelihood_rolling"];
  std::vector<std::string> texts;
  for (const auto& t : roll["requests"]) texts.push_back(t.get<std::string>());
  size_t before = lm.payloads().size();
  auto rr = lm.loglikelihood_rolling(texts);
  std::vector<Json> rolling_bodies(lm.payloads().begin() + before, lm.payloads().end());
  expect_same_bodies(rolling_bodies, roll["payloads"], "loglikelihood_rolling");
  for (size_t i = 0; i < rr.size(); ++i)
    EXPECT_EQ(rr[i], roll["results"][i].get<double>()) << "rolling " << i;

  const Json& gen = c["generate_until"];
  std::vector<GenerationRequest> greqs;
  for (const auto& r : gen["requests"]) greqs.push_back({r[0].get<std::string>(), r[1]});
  before = lm.payloads().size();
  auto out = lm.generate_until(greqs);
  std::vector<Json> gen_bodies(lm.payloads().begin() + before, lm.payloads().end());
  expect_same_bodies(gen_bodies, gen["payloads"], "generate_until");
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], gen["results"][i].get<std::string>()) << "generation " << i;
}

INSTANTIATE_TEST_SUITE_P(Goldens, ApiPayload_Reference, ::testing::Range<size_t>(0, 6),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return goldens()["configs"][i.param]["name"].get<std::string>();
                         });

TEST(ApiPayload_Reference, ChatMessagesAndThinkEndToken) {
  const Json& c = goldens()["chat"];
  FakeServer server([&](const std::string&, const Json& b, int) { return stand_in(b, nullptr); });
  Json args = {{"model", "stories"},
               {"base_url", server.url("/v1/chat/completions")},
               {"think_end_token", "</think>"}};
  ApiLM lm(parse_api_args(ApiKind::kLocalChat, args, {}));
  lm.keep_payloads(true);
  std::string context =
      lm.apply_chat_template({{"system", "Be brief."}, {"user", "Q? \u00e9"}}, true);
  EXPECT_EQ(context, c["context"].get<std::string>());
  auto out = lm.generate_until({{context, c["gen_kwargs"]}});
  expect_same_bodies(lm.payloads(), c["payloads"], "chat");
  EXPECT_EQ(out.at(0), c["results"][0].get<std::string>());
}

// --- parsing, with answers written by hand ---------------------------------------------------

TEST(ApiPayload_Parse, LogprobsSliceAndGreedy) {
  Json answer = Json::parse(R"({"choices":[
    {"index":1,"logprobs":{"token_logprobs":[null,-1.0,-0.5,-2.0,-7.0],
                           "top_logprobs":[null,{"a":-1.0},{"b":-0.5,"c":-0.25},{"d":-2.0},{"e":-7.0}]}},
    {"index":0,"logprobs":{"token_logprobs":[null,-1.0,-3.0],
                           "top_logprobs":[null,{"a":-1.0},{"x":-3.0}]}}]})");
  auto r = parse_logprobs(answer, {1, 2});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0].loglikelihood, -1.0);  // index 0: [1:-1] of 3 entries
  EXPECT_TRUE(r[0].is_greedy);
  EXPECT_DOUBLE_EQ(r[1].loglikelihood, -2.5);  // index 1: [2:-1] = -0.5, -2.0
  EXPECT_FALSE(r[1].is_greedy);                // -0.5 is not the best (-0.25)
  EXPECT_THROW(parse_logprobs(answer, {1}), MalformedResponse);
}

TEST(ApiPayload_Parse, GenerationsPlacedByIndexAndNulls) {
  Json answer = Json::parse(R"({"choices":[{"index":1,"text":"b"},{"index":0,"text":null}]})");
  auto r = parse_generations(Endpoint::kCompletions, answer, 2, std::nullopt);
  EXPECT_FALSE(r[0].has_value());
  EXPECT_EQ(r[1].value(), "b");
  EXPECT_THROW(parse_generations(Endpoint::kCompletions, answer, 3, std::nullopt),
               MalformedResponse);
  EXPECT_THROW(parse_body("<html>"), MalformedResponse);
}

TEST(ApiPayload_Build, OpenAIChatReasoningModelsDropStop) {
  PayloadStyle s{Endpoint::kChat, true};
  Json p = generation_payload(s, "o3-mini", Json::array(),
                              Json{{"until", Json::array({"\n"})}, {"temperature", 0}}, 256, 1234,
                              std::nullopt);
  EXPECT_FALSE(p.contains("stop"));
  EXPECT_EQ(p["temperature"], 1);
  EXPECT_EQ(p["max_completion_tokens"], 256);
  Json q = generation_payload(s, "gpt-4o", Json::array(), Json::object(), 256, 1234, std::nullopt);
  EXPECT_EQ(q["stop"], Json::array({"<|endoftext|>"}));
}

}  // namespace
}  // namespace lmeval::api

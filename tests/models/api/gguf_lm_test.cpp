// --model gguf / ggml against the reference's own GGUFLM: goldens/gguf_reference.json (made by
// scripts/gen_gguf_goldens.py) holds each body GGUFLM posted to a fake llama.cpp-style server,
// the fake's answer and GGUFLM's results; here a loopback server replays those answers to
// lm-eval's bodies, which must be the same bodies.
#include <gtest/gtest.h>

#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/fake_server.hpp"
#include "models/api/gguf_lm.hpp"
#include "models/api/openai_payload.hpp"
#include "models/model_arg_docs.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

using lmeval::test::FakeReply;
using lmeval::test::FakeServer;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() / "tests/models/api/goldens/gguf_reference.json");
  return Json::parse(in);
}

// Answers a body with the golden answer to the same body (400 when GGUFLM never sent it).
FakeServer::Handler replay(const Json& g) {
  return [g](const std::string& path, const Json& body, int) {
    for (const auto& e : g["exchanges"])
      if (e["path"] == path && e["body"] == body) return FakeReply{200, e["answer"].dump()};
    return FakeReply{400, R"({"error":"a body the reference never sent"})"};
  };
}

std::unique_ptr<LM> make(const FakeServer& server, Json args = Json::object()) {
  ModelRegistry reg;
  register_api_models(reg);
  args["base_url"] = server.url("");
  return reg.find("gguf")->factory(args, {});
}

TEST(GgufReference, SameBodiesAndResults) {
  const Json g = goldens();
  FakeServer server(replay(g));
  auto lm = make(server);
  std::vector<LoglikelihoodRequest> ll;
  for (const auto& r : g["loglikelihood"]["requests"]) ll.push_back({r[0], r[1]});
  auto got = lm->loglikelihood(ll);
  ASSERT_EQ(got.size(), ll.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i].loglikelihood, g["loglikelihood"]["results"][i][0].get<double>()) << i;
    EXPECT_EQ(got[i].is_greedy, g["loglikelihood"]["results"][i][1].get<bool>()) << i;
  }
  std::vector<GenerationRequest> gen;
  for (const auto& r : g["generate_until"]["requests"]) gen.push_back({r[0], r[1]});
  auto texts = lm->generate_until(gen);
  ASSERT_EQ(texts.size(), gen.size());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(texts[i], g["generate_until"]["results"][i].get<std::string>()) << i;
  // Every body is one the reference sent, in the reference's order, and each was sent once.
  std::vector<Json> sent = server.bodies();
  ASSERT_EQ(sent.size(), g["exchanges"].size());
  for (size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(sent[i], g["exchanges"][i]["body"]) << i;
}

TEST(GgufReference, GgmlIsTheSameModel) {
  ModelRegistry reg;
  register_api_models(reg);
  ASSERT_NE(reg.find("ggml"), nullptr);
  EXPECT_EQ(reg.find("ggml")->name, "gguf");
}

TEST(GgufReference, RollingIsRefusedAsTheReferenceRefusesIt) {
  FakeServer server(replay(goldens()));
  auto lm = make(server);
  try {
    lm->loglikelihood_rolling({"text"});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("loglikelihood_rolling not yet supported"),
              std::string::npos);
  }
}

TEST(GgufArgs, BaseUrlIsRequired) {
  for (const Json& args : {Json::object(), Json{{"base_url", "ftp://h"}},
                           Json{{"base_url", "http://h"}, {"num_concurrent", "0"}}}) {
    try {
      parse_gguf_args(args);
      ADD_FAILURE() << args.dump();
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().field.rfind("--model_args ", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(parse_gguf_args(Json{{"base_url", "http://h:1/"}, {"model", "x"}}).base_url,
            "http://h:1");
}

TEST(GgufArgs, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find("gguf");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->passes_other_args);
  testing::expect_documented("gguf", e->args);
}

TEST(GgufLogprobs, GetResultAsTheReference) {
  // Context "ab" (2 code points): tokens from offset 2 on; the last (generated) one is not summed
  // but is checked for greed.
  Json a = Json::parse(R"({"choices":[{"logprobs":{"text_offset":[0,1,2,3],
      "tokens":["a","b","c","Z"],"token_logprobs":[null,-1.0,-0.5,-2.0],
      "top_logprobs":[{"a":0},{"b":-1.0},{"c":-0.5,"x":-0.7},{"Z":-2.0}]}}]})");
  auto r = parse_gguf_logprobs(a, "ab");
  EXPECT_DOUBLE_EQ(r.loglikelihood, -0.5);
  EXPECT_TRUE(r.is_greedy);
  a["choices"][0]["logprobs"]["top_logprobs"][3] = Json{{"Y", -1.0}, {"Z", -2.0}};
  EXPECT_FALSE(parse_gguf_logprobs(a, "ab").is_greedy);
  // Offsets count code points: "é" is one.
  EXPECT_DOUBLE_EQ(parse_gguf_logprobs(a,
                                       "\xc3\xa9"
                                       "b")
                       .loglikelihood,
                   -0.5);
  // No token past the context: the reference's IndexError.
  EXPECT_THROW(parse_gguf_logprobs(a, "abcdef"), RuntimeError);
  EXPECT_THROW(parse_gguf_logprobs(Json::parse(R"({"choices":[{"logprobs":null}]})"), "ab"),
               MalformedResponse);
  EXPECT_THROW(parse_gguf_logprobs(Json::parse(R"({"choices":[]})"), "ab"), MalformedResponse);
}

TEST(GgufBodies, AsGgufCompletionBuildsThem) {
  EXPECT_EQ(gguf_loglikelihood_body("a", "").dump(),
            R"({"prompt":"a","logprobs":10,"temperature":0.0})");
  EXPECT_EQ(gguf_generate_body("a", Json::object()).dump(),
            R"({"prompt":"a","logprobs":10,"temperature":0.0,"stop":["</s>"]})");
  EXPECT_EQ(gguf_generate_body("a", Json{{"until", nullptr}}).dump(),
            R"({"prompt":"a","logprobs":10,"temperature":0.0})");
}

}  // namespace
}  // namespace lmeval::api

// --model anthropic-chat (alias anthropic-chat-completions) against the reference's own
// AnthropicChat: goldens/anthropic_reference.json (made by scripts/gen_anthropic_goldens.py)
// holds each Messages API body and the headers AnthropicChat sent to a fake server, the fake's
// answers and AnthropicChat's results; here a loopback server replays those answers to
// lm-eval's bodies, which must be the same. The key goes in its header and nowhere else.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/anthropic_payload.hpp"
#include "models/api/api_lm.hpp"
#include "models/api/fake_server.hpp"
#include "models/api/one_doc_run.hpp"
#include "models/api/openai_payload.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using lmeval::test::FakeReply;
using lmeval::test::FakeServer;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() /
                   "tests/models/api/goldens/anthropic_reference.json");
  return Json::parse(in);
}

// Sets ANTHROPIC_API_KEY for one test and restores what was there.
class AnthropicKey : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv("ANTHROPIC_API_KEY");
    saved_ = v ? std::optional<std::string>(v) : std::nullopt;
    ::setenv("ANTHROPIC_API_KEY", goldens()["api_key"].get<std::string>().c_str(), 1);
  }
  void TearDown() override {
    if (saved_)
      ::setenv("ANTHROPIC_API_KEY", saved_->c_str(), 1);
    else
      ::unsetenv("ANTHROPIC_API_KEY");
  }
  std::optional<std::string> saved_;
};

std::unique_ptr<LM> make(const std::string& name, const FakeServer& server, Json args) {
  ModelRegistry reg;
  register_api_models(reg);
  args["base_url"] = server.url("/v1/messages");
  return reg.find(name)->factory(args, {});
}

TEST_F(AnthropicKey, SameBodiesHeadersAndResultsAsTheReference) {
  const Json g = goldens();
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["model_args"].dump());
    FakeServer server([&](const std::string& path, const Json& body, int) {
      for (const auto& e : c["exchanges"])
        if (e["path"] == path && e["body"] == body) return FakeReply{200, e["answer"].dump()};
      return FakeReply{400, R"({"error":"a body the reference never sent"})"};
    });
    auto lm = make("anthropic-chat-completions", server, c["model_args"]);
    std::vector<GenerationRequest> reqs;
    for (size_t i = 0; i < g["chats"].size(); ++i) {
      std::vector<ChatMessage> msgs;
      for (const auto& m : g["chats"][i]) msgs.push_back({m["role"], m["content"]});
      reqs.push_back({lm->apply_chat_template(msgs, true), g["gen_kwargs"][i]});
    }
    auto texts = lm->generate_until(reqs);
    ASSERT_EQ(texts.size(), c["results"].size());
    for (size_t i = 0; i < texts.size(); ++i)
      EXPECT_EQ(texts[i], c["results"][i].get<std::string>()) << i;
    // The reference's order (longest context first) and bodies; its two headers.
    const auto sent = server.bodies();
    const auto headers = server.headers();
    ASSERT_EQ(sent.size(), c["exchanges"].size());
    for (size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(sent[i], c["exchanges"][i]["body"]) << i;
      EXPECT_EQ(headers[i].value("x-api-key", ""), c["exchanges"][i]["headers"]["x-api-key"]);
      EXPECT_EQ(headers[i].value("anthropic-version", ""),
                c["exchanges"][i]["headers"]["anthropic-version"]);
      EXPECT_FALSE(headers[i].contains("Authorization"));
    }
  }
}

TEST_F(AnthropicKey, LoglikelihoodIsRefusedAsTheReferenceRefusesIt) {
  FakeServer server([](const std::string&, const Json&, int) { return FakeReply{500, "{}"}; });
  auto lm = make("anthropic-chat", server, Json{{"model", "m"}});
  try {
    lm->loglikelihood({{"a", "b"}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not support the return of loglikelihood"),
              std::string::npos);
  }
  EXPECT_EQ(server.calls(), 0);
}

TEST(AnthropicChat, WithoutAKeySaysWhichVariable) {
  const char* v = std::getenv("ANTHROPIC_API_KEY");
  const std::optional<std::string> saved = v ? std::optional<std::string>(v) : std::nullopt;
  ::unsetenv("ANTHROPIC_API_KEY");
  ::setenv("OPENAI_API_KEY", "sk-openai-not-for-anthropic", 1);  // never used for Anthropic
  try {
    parse_api_args(ApiKind::kAnthropicChat, Json{{"model", "m"}}, {});
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "ANTHROPIC_API_KEY");
  }
  ::unsetenv("OPENAI_API_KEY");
  if (saved) ::setenv("ANTHROPIC_API_KEY", saved->c_str(), 1);
}

TEST(AnthropicPayload, StopsAndSystemAsCreatePayload) {
  const Json msgs =
      Json::parse(R"([{"role":"system","content":""},{"role":"user","content":"q"}])");
  // A falsy system message stays a message; whitespace stops dropped; no eos: [null].
  Json p = anthropic_messages_payload("m", msgs, Json{{"until", Json::array({" ", "\n"})}}, 9,
                                      std::nullopt);
  EXPECT_EQ(p["messages"].size(), 2u);
  EXPECT_FALSE(p.contains("system"));
  EXPECT_EQ(p["stop_sequences"], Json::parse("[null]"));
  EXPECT_EQ(p["max_tokens"], 9);
  p = anthropic_messages_payload("m", msgs, Json{{"until", "X"}, {"top_k", 3}}, 9, "E");
  EXPECT_EQ(p["stop_sequences"], Json::parse(R"(["X","E"])"));
  EXPECT_EQ(p["top_k"], 3);
  EXPECT_EQ(
      parse_anthropic_message(Json::parse(
          R"({"content":[{"type":"thinking","thinking":"..."},{"type":"text","text":"A"}]})")),
      "A");
  EXPECT_THROW(parse_anthropic_message(Json::parse(R"({"content":[]})")), MalformedResponse);
}

// A whole run: the key reaches the server in x-api-key and appears in no output, log line or
// error message (also when the server refuses it).
TEST_F(AnthropicKey, TheKeyIsInNoOutput) {
  const std::string key = goldens()["api_key"];
  for (int status : {200, 401}) {
    SCOPED_TRACE(status);
    FakeServer server([status](const std::string&, const Json& body, int) {
      return FakeReply{
          status,
          status == 200
              ? Json{{"content", Json::array({Json{{"type", "text"}, {"text", "x"}}})}}.dump()
              : R"({"error":{"message":"invalid x-api-key"}})"};
      (void)body;
    });
    lmeval::testing::ScratchDir scratch("lmeval_anthropic");
    const auto r =
        test::run_one_doc(scratch, "",
                          "--model anthropic-chat --model_args model=claude-x,base_url=" +
                              server.url("/v1/messages") + ",max_retries=1 --apply_chat_template");
    EXPECT_EQ(r.exit_code, status == 200 ? 0 : 1) << r.err;
    ASSERT_GE(server.calls(), 1);
    EXPECT_EQ(server.headers()[0].value("x-api-key", ""), key);
    test::expect_secret_in_no_output(r, scratch, key);
  }
}

}  // namespace
}  // namespace lmeval::api

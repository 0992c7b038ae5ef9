// --model textsynth against the reference's own TextSynthLM: goldens/textsynth_reference.json
// (made by scripts/gen_textsynth_goldens.py) holds each request TextSynthLM sent to a fake
// TextSynth API (path, body, Authorization), the answers and its results; here a loopback
// server replays them to lm-eval's requests, which must be the same. The key appears nowhere
// else.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/fake_server.hpp"
#include "models/api/one_doc_run.hpp"
#include "models/api/textsynth_lm.hpp"
#include "models/model_arg_docs.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

using lmeval::test::FakeReply;
using lmeval::test::FakeServer;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() /
                   "tests/models/api/goldens/textsynth_reference.json");
  return Json::parse(in);
}

class TextSynthKey : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv("TEXTSYNTH_API_SECRET_KEY");
    saved_ = v ? std::optional<std::string>(v) : std::nullopt;
    ::setenv("TEXTSYNTH_API_SECRET_KEY", goldens()["api_key"].get<std::string>().c_str(), 1);
  }
  void TearDown() override {
    if (saved_)
      ::setenv("TEXTSYNTH_API_SECRET_KEY", saved_->c_str(), 1);
    else
      ::unsetenv("TEXTSYNTH_API_SECRET_KEY");
  }
  std::optional<std::string> saved_;
};

TEST_F(TextSynthKey, SameRequestsAndResultsAsTheReference) {
  const Json g = goldens();
  FakeServer server([&](const std::string& path, const Json& body, int) {
    for (const auto& e : g["exchanges"])
      if (e["path"] == path && e["body"] == body) return FakeReply{200, e["answer"].dump()};
    return FakeReply{400, R"({"error":"a request the reference never sent"})"};
  });
  ModelRegistry reg;
  register_api_models(reg);
  auto lm =
      reg.find("textsynth")
          ->factory(
              Json{{"engine", g["engine"]}, {"base_url", server.url("")}, {"truncate", "True"}},
              {});
  std::vector<LoglikelihoodRequest> ll;
  for (const auto& r : g["loglikelihood"]["requests"]) ll.push_back({r[0], r[1]});
  auto got = lm->loglikelihood(ll);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i].loglikelihood, g["loglikelihood"]["results"][i][0].get<double>());
    EXPECT_EQ(got[i].is_greedy, g["loglikelihood"]["results"][i][1].get<bool>());
  }
  std::vector<GenerationRequest> gen;
  for (const auto& r : g["generate_until"]["requests"]) gen.push_back({r[0], r[1]});
  auto texts = lm->generate_until(gen);
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(texts[i], g["generate_until"]["results"][i].get<std::string>());
  const auto sent = server.bodies();
  const auto auth = server.auth_headers();
  ASSERT_EQ(sent.size(), g["exchanges"].size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i], g["exchanges"][i]["body"]) << i;
    EXPECT_EQ(auth[i], g["exchanges"][i]["authorization"]) << i;
  }
  EXPECT_THROW(lm->loglikelihood_rolling({"x"}), UserError);
}

TEST_F(TextSynthKey, FailuresDoNotShowTheKey) {
  FakeServer server([](const std::string&, const Json&, int) {
    return FakeReply{401, R"({"error":"bad key"})"};
  });
  ModelRegistry reg;
  register_api_models(reg);
  auto lm = reg.find("textsynth")->factory(Json{{"engine", "e"}, {"base_url", server.url("")}}, {});
  try {
    lm->loglikelihood({{"a", "b"}});
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).find(goldens()["api_key"].get<std::string>()),
              std::string::npos)
        << e.what();
  }
}

TEST(TextSynthArgs, EngineAndKeyAreRequired) {
  const char* v = std::getenv("TEXTSYNTH_API_SECRET_KEY");
  const std::optional<std::string> saved = v ? std::optional<std::string>(v) : std::nullopt;
  ::setenv("TEXTSYNTH_API_SECRET_KEY", "k", 1);
  try {
    parse_textsynth_args(Json::object());
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "--model_args engine");
  }
  ::unsetenv("TEXTSYNTH_API_SECRET_KEY");
  try {
    parse_textsynth_args(Json{{"engine", "e"}});
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "TEXTSYNTH_API_SECRET_KEY");
  }
  if (saved) ::setenv("TEXTSYNTH_API_SECRET_KEY", saved->c_str(), 1);
}

TEST(TextSynthArgs, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find("textsynth");
  ASSERT_NE(e, nullptr);
  testing::expect_documented("textsynth", e->args);
}

// A whole run: the key reaches the server as the Bearer token and appears in no output, log line
// or error message (also when the server refuses it).
TEST_F(TextSynthKey, TheKeyIsInNoOutput) {
  const std::string key = goldens()["api_key"];
  for (int status : {200, 401}) {
    SCOPED_TRACE(status);
    FakeServer server([status](const std::string&, const Json&, int) {
      return FakeReply{status, status == 200 ? R"({"text":"x"})" : R"({"error":"bad key"})"};
    });
    lmeval::testing::ScratchDir scratch("lmeval_textsynth");
    const auto r = test::run_one_doc(
        scratch, "", "--model textsynth --model_args engine=e,base_url=" + server.url(""));
    EXPECT_EQ(r.exit_code, status == 200 ? 0 : 1) << r.err;
    ASSERT_GE(server.calls(), 1);
    EXPECT_EQ(server.auth_headers()[0], "Bearer " + key);
    test::expect_secret_in_no_output(r, scratch, key);
  }
}

}  // namespace
}  // namespace lmeval::api

// --model anthropic-completions against the reference's own AnthropicLM over the anthropic SDK
// 0.38.0: goldens/anthropic_completions_reference.json (made by
// scripts/gen_anthropic_completions_goldens.py) holds each request the SDK sent to a fake Text
// Completions API (path, body, headers, status), the fake's answers and AnthropicLM's results
// or exception; here a loopback server replays them to lm-eval's requests, which must be the
// same. The key appears in no message or output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/anthropic_completions_lm.hpp"
#include "models/api/anthropic_payload.hpp"
#include "models/api/fake_server.hpp"
#include "models/api/one_doc_run.hpp"
#include "models/api/openai_payload.hpp"
#include "models/model_arg_docs.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using lmeval::test::FakeReply;
using lmeval::test::FakeServer;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() /
                   "tests/models/api/goldens/anthropic_completions_reference.json");
  return Json::parse(in);
}

// The golden case whose first prompt is this.
Json golden_case(const std::string& first_prompt) {
  const Json g = goldens();
  for (const auto& c : g["cases"])
    if (c["requests"][0][0] == first_prompt) return c;
  ADD_FAILURE() << "no golden case starts with " << first_prompt;
  return Json::object();
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Sets the SDK client's variables for the test (the golden key) and restores them after.
class AnthropicEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : kVars) {
      const char* v = std::getenv(n);
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(n);
    }
    ::setenv("ANTHROPIC_API_KEY", goldens()["api_key"].get<std::string>().c_str(), 1);
  }
  void TearDown() override {
    for (size_t i = 0; i < saved_.size(); ++i)
      if (saved_[i])
        ::setenv(kVars[i], saved_[i]->c_str(), 1);
      else
        ::unsetenv(kVars[i]);
  }
  static std::unique_ptr<LM> make(const FakeServer& server, const Json& model_args) {
    ::setenv("ANTHROPIC_BASE_URL", server.url("").c_str(), 1);
    ModelRegistry reg;
    register_api_models(reg);
    return reg.find("anthropic-completions")->factory(model_args, {});
  }
  // Replays case `c`'s exchanges in order; a request the reference did not send gets a 400.
  static FakeServer replay(const Json& c) {
    return FakeServer([c](const std::string& path, const Json& body, int call) {
      const Json& ex = c["exchanges"];
      if (call < static_cast<int>(ex.size()) && ex[call]["path"] == path &&
          ex[call]["body"] == body) {
        FakeReply r{ex[call]["status"].get<int>(), ex[call]["answer"].dump()};
        if (r.status == 429) r.retry_after = "0";
        return r;
      }
      return FakeReply{400, R"({"error":"a request the reference never sent"})"};
    });
  }
  static std::vector<GenerationRequest> requests(const Json& c) {
    std::vector<GenerationRequest> out;
    for (const auto& r : c["requests"]) out.push_back({r[0], r[1]});
    return out;
  }
  // The bodies and the headers the reference's SDK sent that the API reads.
  static void expect_sent_as_golden(const FakeServer& server, const Json& c) {
    const auto bodies = server.bodies();
    const auto headers = server.headers();
    ASSERT_EQ(bodies.size(), c["exchanges"].size());
    for (size_t i = 0; i < bodies.size(); ++i) {
      const Json& ex = c["exchanges"][i];
      EXPECT_EQ(bodies[i], ex["body"]) << i;
      Json h = Json::object();
      for (auto it = headers[i].begin(); it != headers[i].end(); ++it) h[lower(it.key())] = *it;
      for (auto it = ex["headers"].begin(); it != ex["headers"].end(); ++it)
        EXPECT_EQ(h.contains(it.key()) ? h[it.key()] : Json(), *it) << i << " " << it.key();
    }
  }
  static constexpr const char* kVars[] = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                                          "ANTHROPIC_BASE_URL"};
  std::vector<std::optional<std::string>> saved_;
};

TEST_F(AnthropicEnv, SameBodiesHeadersAndResultsAsTheReference) {
  int checked = 0;
  const Json g = goldens();
  for (const auto& c : g["cases"]) {
    if (c["method"] != "generate_until" || !c.contains("results") ||
        c["results"].size() != c["requests"].size() ||
        std::find(c["results"].begin(), c["results"].end(), Json()) != c["results"].end())
      continue;
    SCOPED_TRACE(c["model_args"].dump());
    FakeServer server = replay(c);
    auto lm = make(server, c["model_args"]);
    const auto texts = lm->generate_until(requests(c));
    ASSERT_EQ(texts.size(), c["results"].size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(texts[i], c["results"][i]) << i;
    expect_sent_as_golden(server, c);
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // plain, model_args, metadata, three 429s then an answer
}

// Where the reference logs an API error and stops (returning fewer results than requests),
// lm-eval fails the run with the status, after the same requests.
TEST_F(AnthropicEnv, ApiErrorsFailAfterTheReferencesAttempts) {
  for (const char* first : {"one", "FAIL500"}) {
    const Json c = golden_case(first);
    SCOPED_TRACE(first);
    ASSERT_LT(c["results"].size(), c["requests"].size());  // the reference's break
    FakeServer server = replay(c);
    auto lm = make(server, Json::object());
    try {
      lm->generate_until(requests(c));
      ADD_FAILURE();
    } catch (const RuntimeError& e) {
      const int status = c["exchanges"].back()["status"];
      EXPECT_NE(std::string(e.what()).find(std::to_string(status)), std::string::npos) << e.what();
    }
    expect_sent_as_golden(server, c);
  }
}

TEST_F(AnthropicEnv, UntilThatIsNotAListFailsAsInTheReference) {
  for (const char* first : {"Empty", "Str"}) {
    const Json c = golden_case(first);
    EXPECT_EQ(c["error"]["type"], "TypeError");
    FakeServer server = replay(c);
    auto lm = make(server, Json::object());
    EXPECT_THROW(lm->generate_until(requests(c)), RuntimeError) << first;
    EXPECT_EQ(server.calls(), 0);
  }
}

TEST_F(AnthropicEnv, ArgumentsCreateDoesNotTakeAreRefused) {
  const Json c = golden_case("Unknown");
  EXPECT_NE(c["error"]["message"].get<std::string>().find("unexpected keyword argument 'foo'"),
            std::string::npos);
  try {
    parse_anthropic_completions_args(c["model_args"]);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "--model_args foo");
  }
  EXPECT_THROW(parse_anthropic_completions_args(Json{{"metadata", "[1]"}}), UserError);
  EXPECT_THROW(parse_anthropic_completions_args(Json{{"max_tokens_to_sample", "x"}}), UserError);
  EXPECT_THROW(parse_anthropic_completions_args(Json{{"temperature", "hot"}}), UserError);
}

TEST_F(AnthropicEnv, LoglikelihoodIsRefusedWithTheReferencesMessage) {
  FakeServer server([](const std::string&, const Json&, int) { return FakeReply{500, "{}"}; });
  auto lm = make(server, Json::object());
  for (const char* method : {"loglikelihood", "loglikelihood_rolling"}) {
    Json c;
    const Json g = goldens();
    for (const auto& x : g["cases"])
      if (x["method"] == method) c = x;
    try {
      if (std::string(method) == "loglikelihood")
        lm->loglikelihood({{"a", "b"}});
      else
        lm->loglikelihood_rolling({"a"});
      ADD_FAILURE();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c["error"]["message"].get<std::string>()),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(server.calls(), 0);
}

// The SDK builds Completion without validation: the reference returns None for an answer
// without `completion`; lm-eval retries it as a malformed answer and then fails.
TEST_F(AnthropicEnv, AnAnswerWithoutCompletionFails) {
  const Json c = golden_case("NOCOMPLETION");
  EXPECT_EQ(c["results"], Json::parse("[null]"));
  FakeServer server([&](const std::string&, const Json&, int) {
    return FakeReply{200, c["exchanges"][0]["answer"].dump()};
  });
  auto lm = make(server, Json::object());
  EXPECT_THROW(lm->generate_until(requests(c)), RuntimeError);
  EXPECT_EQ(server.calls(), 3);
}

TEST_F(AnthropicEnv, KeyAndBaseUrlComeFromTheSdksVariables) {
  ::unsetenv("ANTHROPIC_API_KEY");
  ::setenv("OPENAI_API_KEY", "sk-openai-not-for-anthropic", 1);
  try {
    parse_anthropic_completions_args(Json::object());
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "ANTHROPIC_API_KEY");
  }
  ::unsetenv("OPENAI_API_KEY");
  // ANTHROPIC_AUTH_TOKEN: the SDK's bearer alternative.
  ::setenv("ANTHROPIC_AUTH_TOKEN", "tok-1", 1);
  FakeServer server([](const std::string&, const Json&, int) {
    return FakeReply{200, R"({"completion":"ok"})"};
  });
  auto lm = make(server, Json::object());
  EXPECT_EQ(lm->generate_until({{"p", Json{{"until", Json::array()}}}})[0], "ok");
  EXPECT_EQ(server.auth_headers()[0], "Bearer tok-1");
  EXPECT_FALSE(server.headers()[0].contains("x-api-key"));
  ::setenv("ANTHROPIC_BASE_URL", "file:///etc", 1);
  try {
    parse_anthropic_completions_args(Json::object());
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ANTHROPIC_BASE_URL"), std::string::npos) << e.what();
  }
}

TEST(AnthropicCompletionPayload, PromptAndStopsAsTheSdkSendsThem) {
  const Json g = goldens();
  const Json p = anthropic_completion_payload("m", "q", 5, 0, Json::array({"a"}),
                                              Json{{"top_p", 0.5}, {"metadata", Json::object()}});
  EXPECT_EQ(p["prompt"],
            std::string(g["facts"]["HUMAN_PROMPT"]) + " q" + std::string(g["facts"]["AI_PROMPT"]));
  EXPECT_EQ(p["stop_sequences"], Json::array({g["facts"]["HUMAN_PROMPT"], "a"}));
  EXPECT_EQ(p["top_p"], 0.5);
  EXPECT_THROW(parse_anthropic_completion(Json::parse(R"({"completion":null})")),
               MalformedResponse);
}

TEST(AnthropicCompletionsArgs, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find("anthropic-completions");
  ASSERT_NE(e, nullptr);
  testing::expect_documented("anthropic-completions", e->args);
}

// A whole run: the key reaches the server in x-api-key and appears in no output, log line or
// error message (also when the server refuses it).
TEST_F(AnthropicEnv, TheKeyIsInNoOutput) {
  const std::string key = goldens()["api_key"];
  for (int status : {200, 401}) {
    SCOPED_TRACE(status);
    FakeServer server([status](const std::string&, const Json&, int) {
      return FakeReply{status, status == 200 ? R"({"completion":"x"})"
                                             : R"({"error":{"message":"invalid x-api-key"}})"};
    });
    lmeval::testing::ScratchDir scratch("lmeval_anthropic_completions");
    const auto r = test::run_one_doc(scratch, "ANTHROPIC_BASE_URL='" + server.url("") + "' ",
                                     "--model anthropic-completions --model_args model=claude-x");
    EXPECT_EQ(r.exit_code, status == 200 ? 0 : 1) << r.err;
    ASSERT_GE(server.calls(), 1);
    EXPECT_EQ(server.headers()[0].value("x-api-key", ""), key);
    test::expect_secret_in_no_output(r, scratch, key);
  }
}

}  // namespace
}  // namespace lmeval::api

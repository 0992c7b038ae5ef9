// --model watsonx_llm against the reference's own WatsonxLLM over the ibm-watsonx-ai SDK:
// goldens/watsonx_reference.json (made by scripts/gen_watsonx_goldens.py) holds each request the
// SDK sent to a fake watsonx.ai software server (method, path, body, Authorization), the answers
// and WatsonxLLM's results or exception. Here a loopback server answers lm-eval's POSTs with the
// golden answer of the same path and body; lm-eval's generation, tokenization and chat bodies
// must be the reference's, in the reference's order per endpoint, and its results the same. The
// SDK's GETs (version, project, model specs) are not made by lm-eval.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/fake_server.hpp"
#include "models/api/one_doc_run.hpp"
#include "models/api/watsonx_lm.hpp"
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
                   "tests/models/api/goldens/watsonx_reference.json");
  return Json::parse(in);
}

// k=v model_args as simple_parse_args_string reads them (the goldens' cases use numbers and
// True only).
Json parse_kv(const std::string& s) {
  Json out = Json::object();
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string kv = s.substr(start, end - start);
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    Json parsed = Json::parse(v, nullptr, false);
    if (v == "True") parsed = true;
    out[k] = parsed.is_number() || parsed.is_boolean() ? parsed : Json(v);
    start = end + 1;
  }
  return out;
}

// The POSTs of a case, all calls: its init's authorize and every call's requests.
std::vector<Json> posts(const Json& c) {
  std::vector<Json> out;
  for (const auto& e : c["init_exchanges"])
    if (e["method"] == "POST") out.push_back(e);
  for (const auto& call : c["calls"])
    for (const auto& e : call["exchanges"])
      if (e["method"] == "POST") out.push_back(e);
  return out;
}

// What a POST body is for.
std::string kind(const Json& body) {
  if (body.is_string() || body.contains("username")) return "authorize";  // IAM's form, /icp4d
  if (body.contains("messages")) return "chat";
  if (body.contains("parameters") && body["parameters"].contains("return_tokens"))
    return "tokenize";
  return "generate";
}

const char* const kVars[] = {"WATSONX_URL",        "WATSONX_API_KEY",       "WATSONX_TOKEN",
                             "WATSONX_PROJECT_ID", "WATSONX_SPACE_ID",      "WATSONX_USERNAME",
                             "WATSONX_PASSWORD",   "LMEVAL_WATSONX_IAM_URL"};

class WatsonxEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : kVars) {
      const char* v = std::getenv(n);
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  void TearDown() override {
    for (size_t i = 0; i < saved_.size(); ++i)
      if (saved_[i])
        ::setenv(kVars[i], saved_[i]->c_str(), 1);
      else
        ::unsetenv(kVars[i]);
  }
  // The case's variables, <URL> being `url`.
  // An IBM Cloud URL is the fake too, its IAM token URL through LMEVAL_WATSONX_IAM_URL.
  static void set_env(const Json& c, const std::string& url) {
    for (const char* n : kVars) ::unsetenv(n);
    for (auto it = c["env"].begin(); it != c["env"].end(); ++it) {
      std::string v = it.value();
      if (v == "<URL>") v = url;
      if (v.find("cloud.ibm.com") != std::string::npos) {
        v = url;
        ::setenv("LMEVAL_WATSONX_IAM_URL", (url + "/identity/token").c_str(), 1);
      }
      ::setenv(it.key().c_str(), v.c_str(), 1);
    }
  }
  // Answers each POST with the golden answer of the same path and body.
  static FakeServer replay(const Json& c) {
    const std::vector<Json> ex = posts(c);
    return FakeServer([ex](const std::string& path, const Json& body, int) {
      for (const auto& e : ex) {
        const std::string p = e["path"];
        if (p.substr(0, p.find('?')) == path && e["body"] == body)
          return FakeReply{e["status"].get<int>(), e["answer"].dump()};
      }
      return FakeReply{400, R"({"errors":[{"message":"a request the reference never sent"}]})"};
    });
  }
  static std::unique_ptr<LM> make(const Json& c) {
    ModelRegistry reg;
    register_api_models(reg);
    return reg.find("watsonx_llm")->factory(parse_kv(c["model_args"]), {});
  }
  std::vector<std::optional<std::string>> saved_;
};

TEST_F(WatsonxEnv, SameRequestsAndResultsAsTheReference) {
  const Json g = goldens();
  int checked = 0;
  for (const auto& c : g["cases"]) {
    if (c.contains("error")) continue;
    SCOPED_TRACE(c["model_args"].dump() + " " + c["env"].dump());
    FakeServer server = replay(c);
    set_env(c, server.url(""));
    auto lm = make(c);
    for (const auto& call : c["calls"]) {
      SCOPED_TRACE(call["method"].dump());
      const std::string method = call["method"];
      const bool chat = call["requests"][0][0].is_array();
      try {
        if (method == "generate_until") {
          std::vector<GenerationRequest> reqs;
          for (const auto& r : call["requests"]) {
            std::string context = r[0].is_string() ? r[0].get<std::string>() : "";
            if (chat) {
              std::vector<ChatMessage> msgs;
              for (const auto& m : r[0]) msgs.push_back({m["role"], m["content"]});
              context = lm->apply_chat_template(msgs, true);
            }
            reqs.push_back({context, r[1]});
          }
          const auto got = lm->generate_until(reqs);
          ASSERT_TRUE(call.contains("results"));
          ASSERT_EQ(got.size(), call["results"].size());
          for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], call["results"][i]);
        } else if (method == "loglikelihood") {
          std::vector<LoglikelihoodRequest> reqs;
          for (const auto& r : call["requests"]) reqs.push_back({r[0], r[1]});
          const auto got = lm->loglikelihood(reqs);
          ASSERT_TRUE(call.contains("results"));
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_DOUBLE_EQ(got[i].loglikelihood, call["results"][i][0].get<double>());
            EXPECT_EQ(got[i].is_greedy, call["results"][i][1].get<bool>());
          }
        } else {
          (void)lm->loglikelihood_rolling({call["requests"][0][0]});
          ADD_FAILURE() << "the reference raised " << call["error"].dump();
        }
      } catch (const UserError& e) {
        EXPECT_EQ(method, "loglikelihood_rolling") << e.what();
        EXPECT_EQ(call["error"]["type"], "ValueError");
      } catch (const RuntimeError& e) {
        ASSERT_TRUE(call.contains("error")) << e.what();
        EXPECT_NE(std::string(e.what()).find("unexpected difference between tokenizer and model"),
                  std::string::npos)
            << e.what();
      }
    }
    // lm-eval's POSTs of each kind are the reference's, in its order (for rolling the
    // reference sends its logprobs probe before it fails; lm-eval refuses first). Every request
    // but the authorization carries the token the fake handed out.
    std::map<std::string, std::vector<Json>> want, got;
    for (const auto& e : c["init_exchanges"])
      if (e["method"] == "POST") want[kind(e["body"])].push_back(e["body"]);
    for (const auto& call : c["calls"])
      for (const auto& e : call["exchanges"])
        if (e["method"] == "POST" && call["method"] != "loglikelihood_rolling")
          want[kind(e["body"])].push_back(e["body"]);
    const auto bodies = server.bodies();
    const auto auth = server.auth_headers();
    for (size_t i = 0; i < bodies.size(); ++i) {
      got[kind(bodies[i])].push_back(bodies[i]);
      if (kind(bodies[i]) != "authorize")
        EXPECT_EQ(auth[i], "Bearer " + g["token"].get<std::string>()) << i;
      else if (bodies[i].is_string())  // IAMTokenAuth's fixed Basic authorization
        EXPECT_EQ(auth[i], c["init_exchanges"][0]["authorization"]) << i;
    }
    EXPECT_EQ(got, want);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST_F(WatsonxEnv, MissingSettingsAreTheReferencesErrors) {
  const Json g = goldens();
  for (const auto& c : g["cases"]) {
    if (!c.contains("error")) continue;
    set_env(c, "https://wx.example");
    try {
      parse_watsonx_args(parse_kv(c["model_args"]));
      ADD_FAILURE() << c["error"].dump();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c["error"]["message"].get<std::string>()),
                std::string::npos)
          << e.what();
    }
  }
  const Json ok = g["cases"][0];
  for (const auto& [var, value, field] : {std::tuple<const char*, const char*, const char*>{
                                              "WATSONX_URL", "http://wx.example", "WATSONX_URL"},
                                          {"WATSONX_USERNAME", "", "WATSONX_USERNAME"}}) {
    set_env(ok, "https://wx.example");
    ::setenv(var, value, 1);
    try {
      parse_watsonx_args(parse_kv(ok["model_args"]));
      ADD_FAILURE() << var << "=" << value;
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().field, field) << e.what();
    }
  }
}

TEST_F(WatsonxEnv, IbmCloudNeedsAnApiKey) {
  for (const char* n : kVars) ::unsetenv(n);
  ::setenv("WATSONX_URL", "https://us-south.ml.cloud.ibm.com", 1);
  ::setenv("WATSONX_USERNAME", "u", 1);
  ::setenv("WATSONX_PASSWORD", "p-1", 1);
  ::setenv("WATSONX_PROJECT_ID", "p", 1);
  try {
    parse_watsonx_args(Json{{"model_id", "m"}});
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "WATSONX_API_KEY") << e.what();
  }
  ::setenv("WATSONX_API_KEY", "k-1", 1);
  EXPECT_EQ(parse_watsonx_args(Json{{"model_id", "m"}}).iam_url,
            "https://iam.cloud.ibm.com/identity/token");
  ::setenv("WATSONX_URL", "https://yp-qa.ml.cloud.ibm.com", 1);
  EXPECT_EQ(parse_watsonx_args(Json{{"model_id", "m"}}).iam_url,
            "https://iam.test.cloud.ibm.com/identity/token");
}

TEST_F(WatsonxEnv, RefusalsAndFailures) {
  const Json g = goldens();
  const Json c = g["cases"][0];
  FakeServer server([&](const std::string& path, const Json&, int) {
    if (path == "/icp4d-api/v1/authorize")
      return FakeReply{200, Json{{"token", g["token"]}}.dump()};
    // A model whose generations carry no input logprobs.
    return FakeReply{200, R"({"results":[{"generated_text":"x","input_tokens":[{"text":"a"}]}]})"};
  });
  set_env(c, server.url(""));
  auto lm = make(c);
  try {
    lm->loglikelihood({{"a", "b"}});
    ADD_FAILURE();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("does not return logprobs for input tokens"),
              std::string::npos)
        << e.what();
  }
  ModelRegistry reg;
  register_api_models(reg);
  auto dep = reg.find("watsonx_llm")->factory(Json{{"deployment_id", "d"}}, {});
  EXPECT_THROW(dep->loglikelihood({{"a", "b"}}), UserError);
  EXPECT_THROW(lm->loglikelihood_rolling({"a"}), UserError);
  // A refused authorization fails before any request, without the key in the message.
  FakeServer refusing([](const std::string&, const Json&, int) {
    return FakeReply{401, R"({"message":"bad credentials"})"};
  });
  set_env(c, refusing.url(""));
  try {
    (void)make(c);
    ADD_FAILURE();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).find(g["api_key"].get<std::string>()), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("401"), std::string::npos) << e.what();
  }
}

TEST(WatsonxLogLikelihood, AsGetLogLikelihood) {
  const Json toks = Json::parse(
      R"([{"text":"Q:","rank":1},{"text":" a","logprob":-0.5,"rank":1},{"text":" b","logprob":-1,"rank":2}])");
  // The context's tokens open the input and its last differs: one token less is context.
  auto r = watsonx_log_likelihood(toks, {"Q:", " a"});
  EXPECT_DOUBLE_EQ(r.loglikelihood, -1.5);
  EXPECT_FALSE(r.is_greedy);
  EXPECT_THROW(watsonx_log_likelihood(toks, {"X", "Q:", " a"}), RuntimeError);
  EXPECT_THROW(watsonx_log_likelihood(Json::parse(R"([{"text":"a","logprob":null,"rank":1}])"), {}),
               RuntimeError);
}

TEST(WatsonxArgs, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find("watsonx_llm");
  ASSERT_NE(e, nullptr);
  testing::expect_documented("watsonx_llm", e->args);
}

// A whole run: the key and the token reach the server only in the authorization body and the
// Authorization header, and appear in no output, log line or error message.
TEST_F(WatsonxEnv, TheKeyIsInNoOutput) {
  const Json g = goldens();
  const std::string key = g["api_key"], token = g["token"];
  for (int status : {200, 401}) {
    SCOPED_TRACE(status);
    FakeServer server([&, status](const std::string& path, const Json&, int) {
      if (path == "/icp4d-api/v1/authorize") return FakeReply{200, Json{{"token", token}}.dump()};
      return FakeReply{status, status == 200 ? R"({"results":[{"generated_text":"x"}]})"
                                             : R"({"errors":[{"message":"expired"}]})"};
    });
    set_env(g["cases"][0], server.url(""));
    lmeval::testing::ScratchDir scratch("lmeval_watsonx");
    const auto r = test::run_one_doc(
        scratch, "", "--model watsonx_llm --model_args model_id=ibm/granite-3-8b-instruct");
    EXPECT_EQ(r.exit_code, status == 200 ? 0 : 1) << r.err;
    ASSERT_GE(server.calls(), 2);
    for (const std::string& secret : {key, token})
      test::expect_secret_in_no_output(r, scratch, secret);
  }
}

}  // namespace
}  // namespace lmeval::api

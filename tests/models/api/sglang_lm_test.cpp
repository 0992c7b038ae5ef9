// --model sglang against a fake SGLang (tests/models/api/fake_sglang, first on PYTHONPATH): the
// server lm-eval starts, its options, the /generate bodies and their answers compared with the
// reference's own SGLangLM class driven over the same fake (goldens/sglang_reference.json, made
// by scripts/gen_sglang_goldens.py), start failures, timeouts, and no server left behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "lmeval/models/api/api_models.hpp"
#include "models/api/engine_fake.hpp"
#include "models/api/openai_payload.hpp"
#include "models/api/sglang_args.hpp"
#include "models/api/sglang_lm.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using engine_test::golden;
using engine_test::model_dir;
using engine_test::options_as_kwargs;
using engine_test::parse_kv;

Json goldens() { return golden("sglang_reference.json"); }

// sglang.Engine's keywords as the reference passes them, and the server options lm-eval gives:
// equal, except that False (SGLang's store_true flags' default) is left out.
const engine_test::EngineOptionRules kEngineRules{"model_path", true, {}, {}};

SglangArgs parse(const Json& model_args, const ModelOptions& options) {
  return parse_sglang_args(model_args, options);
}

// A JSON value with every number as a double (the reference's 0 and lm-eval's 0.0 are equal in
// Python's ==, which is what SGLang compares).
Json numbers_as_doubles(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_array() || v.is_object()) {
    Json out = v;
    for (auto it = out.begin(); it != out.end(); ++it) *it = numbers_as_doubles(*it);
    return out;
  }
  return v;
}

std::multiset<std::string> as_set(const std::vector<Json>& calls) {
  std::multiset<std::string> out;
  for (const auto& c : calls) out.insert(numbers_as_doubles(c).dump());
  return out;
}

TEST(SglangArgs, MapAsTheReferenceMapsThemToEngine) {
  engine_test::for_each_golden_mapping(goldens(), [](const Json& c, const Json& args) {
    const ServerCommand cmd = sglang_server_command(parse_sglang_args(args, {}), "python3", 30000);
    ASSERT_TRUE(engine_test::runs_module(cmd, "sglang.launch_server", 5u));
    EXPECT_EQ(cmd.argv[3], "--model-path");
    EXPECT_EQ(cmd.argv[4], model_dir().string());
    engine_test::expect_same_engine_options(
        c["engine_kwargs"][0], options_as_kwargs({cmd.argv.begin() + 3, cmd.argv.end()}),
        kEngineRules);
  });
}

TEST(SglangArgs, BadValuesNameTheKey) {
  auto expect_refused = [](Json args, const std::string& key, const ModelOptions& o = {}) {
    engine_test::expect_refused(parse, std::move(args), key, o);
  };
  expect_refused({{"context_length", "8"}, {"max_model_len", "8"}}, "--model_args max_model_len");
  expect_refused({{"tp_size", "two"}}, "--model_args tp_size");
  expect_refused({{"dp_size", "0"}}, "--model_args dp_size");
  expect_refused({{"device", "cpu"}}, "--model_args device");  // SGLangLM: CUDA only
  expect_refused({{"batch_size", "big"}}, "--model_args batch_size");
  ModelOptions cli;
  cli.batch_size = "x";
  expect_refused(Json::object(), "--batch_size", cli);
  expect_refused({{"server_timeout", "0"}}, "--model_args server_timeout");
  expect_refused({{"max_gen_toks", "0"}}, "--model_args max_gen_toks");
  engine_test::expect_pretrained_needed(parse);
}

// SGLangLM: "gemma" in the model's name turns add_bos_token on.
TEST(SglangArgs, GemmaAddsTheBosToken) {
  EXPECT_TRUE(parse_sglang_args(Json{{"pretrained", "google/Gemma-2-2b"}}, {}).add_bos_token);
  EXPECT_FALSE(parse_sglang_args(Json{{"pretrained", "m"}}, {}).add_bos_token);
}

TEST(SglangArgs, DocsListTheTable) { engine_test::expect_registered_and_documented("sglang"); }

TEST(SglangLogprobs, SlicesAsTheReference) {
  // tokens 5 7 9, ctxlen 1: positions 1 and 2 scored; 9 is not the best at position 2.
  Json answer = Json::parse(R"({"text":"","meta_info":{
      "input_token_logprobs":[[null,5,null],[-0.5,7,null],[-2.0,9,null]],
      "input_top_logprobs":[null,[[-0.5,7,null],[-3.0,1,null]],[[-0.25,4,null],[-2.0,9,null]]]}})");
  auto r = parse_input_token_logprobs(answer, {5, 7, 9}, 1);
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.5);
  EXPECT_FALSE(r.is_greedy);
  r = parse_input_token_logprobs(answer, {5, 7, 9}, 2);
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.0);
  r = parse_input_token_logprobs(answer, {5, 7, 9}, -1);  // Python's [-1:]
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.0);
  auto g = parse_input_token_logprobs(answer, {5, 7, 4}, 1);  // 4 is the best at position 2
  EXPECT_TRUE(g.is_greedy);
  // An empty or null top list is skipped (`if top_logprobs:`).
  Json sparse = answer;
  sparse["meta_info"]["input_top_logprobs"][2] = Json::array();
  EXPECT_TRUE(parse_input_token_logprobs(sparse, {5, 7, 9}, 1).is_greedy);
  // Ties: max() keeps the first of the largest.
  Json tie = answer;
  tie["meta_info"]["input_top_logprobs"][2] = Json::parse("[[-1.0,9,null],[-1.0,4,null]]");
  EXPECT_TRUE(parse_input_token_logprobs(tie, {5, 7, 9}, 1).is_greedy);
}

TEST(SglangLogprobs, MalformedAnswersAreRefused) {
  EXPECT_THROW(parse_input_token_logprobs(Json::parse(R"({"text":""})"), {1, 2}, 1),
               MalformedResponse);
  EXPECT_THROW(parse_input_token_logprobs(
                   Json::parse(R"({"meta_info":{"input_token_logprobs":[[null,1,null]],
                       "input_top_logprobs":[null]}})"),
                   {1, 2}, 1),
               MalformedResponse);
  // ctxlen 0 reaches the first token's null logprob: the reference fails too.
  EXPECT_THROW(parse_input_token_logprobs(
                   Json::parse(R"({"meta_info":{"input_token_logprobs":[[null,1,null],[-1,2,null]],
                       "input_top_logprobs":[null,null]}})"),
                   {1, 2}, 0),
               RuntimeError);
}

// The fake SGLang: records in FAKE_SGLANG_RECORD_DIR; FAKE_SGLANG_FAIL, _NEVER_READY and
// _DELAY_S make it fail, hang or slow down.
class SglangFake : public engine_test::EngineFake {
 protected:
  SglangFake() : EngineFake({"sglang", "fake_sglang", "FAKE_SGLANG", "SGLang server"}) {}
};

TEST_F(SglangFake, AnswersAsTheReferencesSglangBackend) {
  const Json g = goldens();
  const auto [ll, roll, gen] = engine_test::golden_requests(g);
  for (const auto& c : g["cases"]) {
    const std::string margs = c["model_args"];
    SCOPED_TRACE(margs);
    clear_records();
    {
      auto lm = make(parse_kv(margs));
      engine_test::expect_loglikelihoods(lm->loglikelihood(ll), c["loglikelihood"]);
      // Each /generate body is an Engine.generate request of the reference (in any order).
      EXPECT_EQ(as_set(bodies()), as_set(c["loglikelihood_calls"].get<std::vector<Json>>()));
      clear_requests();
      auto rolled = lm->loglikelihood_rolling(roll);
      ASSERT_EQ(rolled.size(), c["loglikelihood_rolling"].size());
      for (size_t i = 0; i < rolled.size(); ++i)
        EXPECT_DOUBLE_EQ(rolled[i], c["loglikelihood_rolling"][i].get<double>()) << i;
      EXPECT_EQ(as_set(bodies()), as_set(c["rolling_calls"].get<std::vector<Json>>()));
      clear_requests();
      auto texts = lm->generate_until(gen);
      ASSERT_EQ(texts.size(), c["generate_until"].size());
      for (size_t i = 0; i < texts.size(); ++i)
        EXPECT_EQ(texts[i], c["generate_until"][i].get<std::string>()) << i;
      EXPECT_EQ(as_set(bodies()), as_set(c["generate_calls"].get<std::vector<Json>>()));
      // The server was started with what the reference gives sglang.Engine.
      expect_one_server_started_with("--model-path", c["engine_kwargs"][0], kEngineRules);
    }
    // The model gone, its server and the server's scheduler process are gone too.
    expect_servers_and_engines_gone();
  }
}

TEST_F(SglangFake, ServerThatExitsShowsItsLog) {
  expect_exit_shows_log("unrecognized arguments for the fake engine");
}

TEST_F(SglangFake, ApiKeyPassesThroughButIsNeverShown) {
  expect_key_passed_but_hidden("sk-sglang-secret-4242",
                               goldens()["cases"][0]["loglikelihood"][0][0].get<double>(),
                               "unrecognized arguments");
}

TEST_F(SglangFake, ServerNeverReadyTimesOutAndIsStopped) {
  expect_never_ready_stopped("SGLang server was not ready");
}

TEST_F(SglangFake, WithoutTheSglangPackageSaysSo) { expect_missing_package_named(); }

TEST_F(SglangFake, SigtermStopsTheServer) {
  const std::string err = run_and_signal(SIGTERM);
  EXPECT_NE(err.find("SGLang server: stopped"), std::string::npos) << err;
  EXPECT_EQ(err.find("did not stop within"), std::string::npos) << err;
}

TEST_F(SglangFake, SigintStopsTheServer) {
  const std::string err = run_and_signal(SIGINT);
  EXPECT_NE(err.find("SGLang server: stopped"), std::string::npos) << err;
}

TEST_F(SglangFake, SigkillOfLmEvalStillStopsTheServer) { run_and_signal(SIGKILL); }

}  // namespace
}  // namespace lmeval::api

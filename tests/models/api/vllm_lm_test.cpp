// --model vllm against a fake vLLM (tests/models/api/fake_vllm, first on PYTHONPATH): the server
// lm-eval starts, its options, the requests and their answers compared with the reference's own
// VLLM class driven over the same fake engine (goldens/vllm_reference.json, made by
// scripts/gen_vllm_goldens.py), data parallelism, start failures, and no server left behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "lmeval/models/api/api_models.hpp"
#include "models/api/engine_fake.hpp"
#include "models/api/openai_payload.hpp"
#include "models/api/vllm_args.hpp"
#include "models/api/vllm_lm.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using engine_test::golden;
using engine_test::options_as_kwargs;
using engine_test::parse_kv;
using lmeval::testing::alive;

Json goldens() { return golden("vllm_reference.json"); }

// The fake vLLM: records in FAKE_VLLM_RECORD_DIR; FAKE_VLLM_FAIL, _NEVER_READY and _DELAY_S
// make it fail, hang or slow down.
class VllmFake : public engine_test::EngineFake {
 protected:
  VllmFake() : EngineFake({"vllm", "fake_vllm", "FAKE_VLLM", "vLLM server"}) {}
};

// vllm.LLM's keywords as the reference passes them, and the server options lm-eval gives: equal,
// except that a False the server has as its default (trust_remote_code, enable_lora) may be left
// out; the LoRA adapter is served under --lora-modules (LoraServedAsFinetuned).
const engine_test::EngineOptionRules kEngineRules{
    "model", false, {"trust_remote_code", "enable_lora"}, {"lora_modules"}};

VllmArgs parse(const Json& model_args, const ModelOptions& options) {
  return parse_vllm_args(model_args, options);
}

TEST(VllmArgs, MapAsTheReferenceMapsThemToLLM) {
  engine_test::for_each_golden_mapping(goldens(), [](const Json& c, const Json& args) {
    const ServerCommand cmd = vllm_server_command(parse_vllm_args(args, {}), "python3", 8000, 0);
    ASSERT_TRUE(engine_test::runs_module(cmd, "vllm.entrypoints.openai.api_server", 3u));
    engine_test::expect_same_engine_options(
        c["llm_kwargs"][0], options_as_kwargs({cmd.argv.begin() + 3, cmd.argv.end()}),
        kEngineRules);
  });
}

TEST(VllmArgs, LoraServedAsFinetuned) {
  const VllmArgs a =
      parse_vllm_args(Json{{"pretrained", "m"}, {"lora_local_path", "/tmp/adapter"}}, {});
  const auto& o = a.server_options;
  auto at = std::find(o.begin(), o.end(), "--lora-modules");
  ASSERT_NE(at, o.end());
  EXPECT_EQ(*(at + 1), "finetuned=/tmp/adapter");  // LoRARequest("finetuned", 1, path)
}

TEST(VllmArgs, BadValuesNameTheKey) {
  auto expect_refused = [](Json args, const std::string& key) {
    engine_test::expect_refused(parse, std::move(args), "--model_args " + key);
  };
  expect_refused({{"max_length", "8"}, {"max_model_len", "8"}}, "max_model_len");
  expect_refused({{"data_parallel_size", "0"}}, "data_parallel_size");
  expect_refused({{"tensor_parallel_size", "two"}}, "tensor_parallel_size");
  expect_refused({{"truncation_side", "top"}}, "truncation_side");
  expect_refused({{"server_timeout", "0"}}, "server_timeout");
  expect_refused({{"enable_thinking", "True"}}, "enable_thinking");
  expect_refused({{"data_parallel_size", "2"}, {"enable_expert_parallel", "True"}},
                 "data_parallel_size");
  engine_test::expect_pretrained_needed(parse);
}

TEST(VllmArgs, DocsListTheTable) { engine_test::expect_registered_and_documented("vllm"); }

TEST(VllmPromptLogprobs, SlicesAsTheReference) {
  // tokens 5 7 9, ctxlen 1: positions 1 and 2 scored; 9 is not the best at position 2.
  Json answer = Json::parse(R"({"choices":[{"index":0,"text":"","prompt_logprobs":[null,
      {"7":{"logprob":-0.5,"rank":1,"decoded_token":"a"}},
      {"9":{"logprob":-2.0,"rank":2,"decoded_token":"b"},"4":{"logprob":-0.25,"rank":1,"decoded_token":"c"}}]}]})");
  auto r = parse_prompt_logprobs(answer, {5, 7, 9}, 1);
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.5);
  EXPECT_FALSE(r.is_greedy);
  r = parse_prompt_logprobs(answer, {5, 7, 9}, 2);
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.0);
  r = parse_prompt_logprobs(answer, {5, 7, 9}, -1);  // Python's tokens[-1:]
  EXPECT_DOUBLE_EQ(r.loglikelihood, -2.0);
  auto g = parse_prompt_logprobs(answer, {5, 7, 4}, 1);  // 4 is the best at position 2
  EXPECT_DOUBLE_EQ(g.loglikelihood, -0.75);
  EXPECT_TRUE(g.is_greedy);
}

TEST(VllmPromptLogprobs, MalformedAnswersAreRefused) {
  EXPECT_THROW(parse_prompt_logprobs(Json::parse(R"({"choices":[]})"), {1, 2}, 1),
               MalformedResponse);
  EXPECT_THROW(
      parse_prompt_logprobs(Json::parse(R"({"choices":[{"prompt_logprobs":[null]}]})"), {1, 2}, 1),
      MalformedResponse);
  EXPECT_THROW(parse_prompt_logprobs(
                   Json::parse(R"({"choices":[{"prompt_logprobs":[null,{"3":{"logprob":-1}}]}]})"),
                   {1, 2}, 1),
               MalformedResponse);
  // ctxlen 0 reaches the null first entry: the reference fails too.
  EXPECT_THROW(parse_prompt_logprobs(
                   Json::parse(R"({"choices":[{"prompt_logprobs":[null,{"2":{"logprob":-1}}]}]})"),
                   {1, 2}, 0),
               RuntimeError);
}

TEST_F(VllmFake, AnswersAsTheReferencesVllmBackend) {
  const Json g = goldens();
  const auto [ll, roll, gen] = engine_test::golden_requests(g);
  for (const auto& c : g["cases"]) {
    const std::string margs = c["model_args"];
    SCOPED_TRACE(margs);
    clear_records();
    {
      auto lm = make(parse_kv(margs));
      engine_test::expect_loglikelihoods(lm->loglikelihood(ll), c["loglikelihood"]);
      auto bodies_ll = bodies();
      ASSERT_EQ(bodies_ll.size(), ll.size());
      const Json& sp = c["loglikelihood_params"][0];  // SamplingParams of loglikelihood
      for (const auto& b : bodies_ll) {
        EXPECT_EQ(b["max_tokens"], sp["max_tokens"]);
        EXPECT_EQ(b["temperature"], sp["temperature"]);
        EXPECT_EQ(b["prompt_logprobs"], sp["prompt_logprobs"]);
        EXPECT_TRUE(b["prompt"].is_array());
      }
      auto rolled = lm->loglikelihood_rolling(roll);
      ASSERT_EQ(rolled.size(), c["loglikelihood_rolling"].size());
      for (size_t i = 0; i < rolled.size(); ++i)
        EXPECT_DOUBLE_EQ(rolled[i], c["loglikelihood_rolling"][i].get<double>()) << i;
      clear_requests();
      auto texts = lm->generate_until(gen);
      ASSERT_EQ(texts.size(), c["generate_until"].size());
      for (size_t i = 0; i < texts.size(); ++i)
        EXPECT_EQ(texts[i], c["generate_until"][i].get<std::string>()) << i;
      // Each request's sampling settings are the SamplingParams the reference made (in any order).
      std::multiset<std::string> want, have;
      for (const auto& p : c["generate_params"]) want.insert(p.dump());
      for (auto b : bodies()) {
        if (b.contains("prompt_logprobs")) continue;
        b.erase("prompt");
        b.erase("model");
        have.insert(Json::parse(b.dump()).dump());
      }
      std::multiset<std::string> want_sorted, have_sorted;
      for (const auto& w : want) want_sorted.insert(nlohmann::json::parse(w).dump());
      for (const auto& h : have) have_sorted.insert(nlohmann::json::parse(h).dump());
      EXPECT_EQ(have_sorted, want_sorted);
      // The server was started with what the reference gives vllm.LLM.
      expect_one_server_started_with("--model", c["llm_kwargs"][0], kEngineRules);
    }
    // The model gone, its server and the server's engine process are gone too.
    expect_servers_and_engines_gone();
  }
}

// data_parallel_size=2: two servers, each on its own GPU slice, requests spread over both, the
// same answers.
TEST_F(VllmFake, DataParallelServersShareTheRequests) {
  const Json g = goldens();
  const Json& c = g["cases"][0];
  std::vector<LoglikelihoodRequest> ll;
  for (const auto& r : g["requests"]["loglikelihood"]) ll.push_back({r[0], r[1]});
  ::setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
  {
    auto lm = make(Json{{"data_parallel_size", "2"}});
    auto got = lm->loglikelihood(ll);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_DOUBLE_EQ(got[i].loglikelihood, c["loglikelihood"][i][0].get<double>()) << i;
    auto recs = servers();
    ASSERT_EQ(recs.size(), 2u);
    std::set<std::string> devices;
    for (const auto& r : recs) devices.insert(r["cuda_visible_devices"].get<std::string>());
    EXPECT_EQ(devices, (std::set<std::string>{"4", "5"}));
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(scratch_.path()))
      files += e.path().filename().string().rfind("requests_", 0) == 0;
    EXPECT_EQ(files, 2u);  // both servers got requests
    EXPECT_EQ(bodies().size(), ll.size());
  }
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  for (const auto& r : servers()) EXPECT_FALSE(alive(r["pid"].get<pid_t>()));
}

TEST_F(VllmFake, ServerThatExitsShowsItsLog) { expect_exit_shows_log("fake engine error"); }

TEST_F(VllmFake, ApiKeyPassesThroughButIsNeverShown) {
  expect_key_passed_but_hidden("sk-vllm-secret-4242",
                               goldens()["cases"][0]["loglikelihood"][0][0].get<double>(),
                               "fake engine error");
}

TEST_F(VllmFake, ServerNeverReadyTimesOutAndIsStopped) {
  expect_never_ready_stopped("was not ready");
}

TEST_F(VllmFake, WithoutTheVllmPackageSaysSo) { expect_missing_package_named(); }

TEST_F(VllmFake, SigtermStopsTheServers) {
  const std::string err = run_and_signal(SIGTERM);
  // The graceful path: the run noticed the stop and unwound (not the watchdog's hard exit).
  EXPECT_NE(err.find("vLLM server: stopped"), std::string::npos) << err;
  EXPECT_EQ(err.find("did not stop within"), std::string::npos) << err;
}

// lm-eval killed outright: the server gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and stops
// its engine, as vLLM's server does.
TEST_F(VllmFake, SigkillOfLmEvalStillStopsTheServers) { run_and_signal(SIGKILL); }

}  // namespace
}  // namespace lmeval::api

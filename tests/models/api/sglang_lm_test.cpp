// --model sglang against a fake SGLang (tests/models/api/fake_sglang, first on PYTHONPATH): the
// server lm-eval starts, its options, the /generate bodies and their answers compared with the
// reference's own SGLangLM class driven over the same fake (goldens/sglang_reference.json, made
// by scripts/gen_sglang_goldens.py), start failures, timeouts, and no server left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/child_process.hpp"
#include "models/api/openai_payload.hpp"
#include "models/api/sglang_args.hpp"
#include "models/api/sglang_lm.hpp"
#include "models/model_arg_docs.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using lmeval::testing::alive;

const fs::path& model_dir() {
  static const fs::path p = lmeval::testing::source_dir() / "models" / "stories260K";
  return p;
}

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() /
                   "tests/models/api/goldens/sglang_reference.json");
  return Json::parse(in);
}

// The reference's simple_parse_args_string, for the goldens' model_args strings (values as text;
// the backend coerces them as it does CLI values).
Json parse_kv(const std::string& s) {
  Json out = Json::object();
  std::stringstream ss(s);
  for (std::string kv; std::getline(ss, kv, ',');) {
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

// The server's options read back as sglang.Engine keywords: --a-b V -> a_b: V, a bare flag ->
// True; numbers as numbers.
Json options_as_kwargs(const std::vector<std::string>& argv) {
  Json out = Json::object();
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].rfind("--", 0) != 0) continue;
    std::string key = argv[i].substr(2);
    for (char& c : key)
      if (c == '-') c = '_';
    if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
      const std::string& v = argv[++i];
      Json parsed = Json::parse(v, nullptr, false);
      out[key] = parsed.is_discarded() || parsed.is_string() ? Json(v) : parsed;
    } else {
      out[key] = true;
    }
  }
  return out;
}

// sglang.Engine's keywords as the reference passes them, and the server options lm-eval gives:
// equal, except that None is not passed and False (SGLang's store_true flags' default) is left
// out; host and port are the server's own; model_path is checked apart (relative in the goldens).
void expect_same_engine_options(const Json& engine_kwargs, Json options) {
  options.erase("host");
  options.erase("port");
  for (auto it = engine_kwargs.begin(); it != engine_kwargs.end(); ++it) {
    const std::string& k = it.key();
    const Json& want = it.value();
    if (k == "model_path") {
      EXPECT_TRUE(options.contains("model_path"));
      options.erase("model_path");
      continue;
    }
    if (want.is_null() || want == false) {
      EXPECT_FALSE(options.contains(k)) << k << " passed though the reference passes " << want;
      continue;
    }
    ASSERT_TRUE(options.contains(k)) << k << " missing; options: " << options.dump();
    if (want.is_number() && options[k].is_number())
      EXPECT_DOUBLE_EQ(options[k].get<double>(), want.get<double>()) << k;
    else
      EXPECT_EQ(options[k], want) << k;
    options.erase(k);
  }
  EXPECT_TRUE(options.empty()) << "options the reference does not pass: " << options.dump();
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
  const Json g = goldens();
  std::vector<Json> all;
  for (const auto& c : g["cases"]) all.push_back(c);
  for (const auto& m : g["mappings"]) all.push_back(m);
  for (const auto& c : all) {
    SCOPED_TRACE(c["model_args"].get<std::string>());
    Json args = parse_kv(c["model_args"].get<std::string>());
    args["pretrained"] = model_dir().string();
    const SglangArgs a = parse_sglang_args(args, {});
    const ServerCommand cmd = sglang_server_command(a, "python3", 30000);
    ASSERT_GE(cmd.argv.size(), 5u);
    EXPECT_EQ(cmd.argv[1], "-m");
    EXPECT_EQ(cmd.argv[2], "sglang.launch_server");
    EXPECT_EQ(cmd.argv[3], "--model-path");
    EXPECT_EQ(cmd.argv[4], model_dir().string());
    expect_same_engine_options(c["engine_kwargs"][0],
                               options_as_kwargs({cmd.argv.begin() + 3, cmd.argv.end()}));
  }
}

TEST(SglangArgs, BadValuesNameTheKey) {
  auto expect_refused = [](Json args, const std::string& key, const ModelOptions& o = {}) {
    args["pretrained"] = "m";
    try {
      parse_sglang_args(args, o);
      ADD_FAILURE() << key;
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().field, key) << e.what();
    }
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
  try {
    parse_sglang_args(Json::object(), {});
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "--model_args pretrained");
  }
}

// SGLangLM: "gemma" in the model's name turns add_bos_token on.
TEST(SglangArgs, GemmaAddsTheBosToken) {
  EXPECT_TRUE(parse_sglang_args(Json{{"pretrained", "google/Gemma-2-2b"}}, {}).add_bos_token);
  EXPECT_FALSE(parse_sglang_args(Json{{"pretrained", "m"}}, {}).add_bos_token);
}

TEST(SglangArgs, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find("sglang");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->passes_other_args);
  testing::expect_documented("sglang", e->args);
}

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

class SglangFake : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv("VIRTUAL_ENV");
    saved_venv_ = v ? std::optional<std::string>(v) : std::nullopt;
    ::unsetenv("VIRTUAL_ENV");
    ::setenv("PYTHONPATH", (lmeval::testing::source_dir() / "tests/models/api/fake_sglang").c_str(),
             1);
    ::setenv("FAKE_SGLANG_RECORD_DIR", scratch_.path().c_str(), 1);
    for (const char* k : {"FAKE_SGLANG_FAIL", "FAKE_SGLANG_NEVER_READY", "FAKE_SGLANG_DELAY_S"})
      ::unsetenv(k);
    registry_ = std::make_unique<ModelRegistry>();
    register_api_models(*registry_);
  }
  void TearDown() override {
    if (saved_venv_) ::setenv("VIRTUAL_ENV", saved_venv_->c_str(), 1);
    ::unsetenv("PYTHONPATH");
  }
  std::unique_ptr<LM> make(Json args) {
    args["pretrained"] = model_dir().string();
    return registry_->find("sglang")->factory(args, {});
  }
  std::vector<Json> read_all(const std::string& prefix, bool lines) const {
    std::vector<Json> out;
    for (const auto& e : fs::directory_iterator(scratch_.path()))
      if (e.path().filename().string().rfind(prefix, 0) == 0) {
        std::ifstream in(e.path());
        if (!lines) {
          out.push_back(Json::parse(in));
          continue;
        }
        for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
      }
    return out;
  }
  std::vector<Json> servers() const { return read_all("server_", false); }
  std::vector<Json> bodies() const { return read_all("requests_", true); }
  void clear_requests() {
    for (const auto& e : fs::directory_iterator(scratch_.path()))
      if (e.path().filename().string().rfind("requests_", 0) == 0) fs::remove(e.path());
  }
  void clear_records() {
    for (const auto& e : fs::directory_iterator(scratch_.path())) fs::remove_all(e.path());
  }
  std::string run_and_signal(int sig);

  lmeval::testing::ScratchDir scratch_{"lmeval_sglang"};
  std::optional<std::string> saved_venv_;
  std::unique_ptr<ModelRegistry> registry_;
};

TEST_F(SglangFake, AnswersAsTheReferencesSglangBackend) {
  const Json g = goldens();
  const Json& req = g["requests"];
  std::vector<LoglikelihoodRequest> ll;
  for (const auto& r : req["loglikelihood"]) ll.push_back({r[0], r[1]});
  std::vector<std::string> roll;
  for (const auto& r : req["loglikelihood_rolling"]) roll.push_back(r);
  std::vector<GenerationRequest> gen;
  for (const auto& r : req["generate_until"]) gen.push_back({r[0], r[1]});
  for (const auto& c : g["cases"]) {
    const std::string margs = c["model_args"];
    SCOPED_TRACE(margs);
    clear_records();
    {
      auto lm = make(parse_kv(margs));
      auto got = lm->loglikelihood(ll);
      ASSERT_EQ(got.size(), c["loglikelihood"].size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_DOUBLE_EQ(got[i].loglikelihood, c["loglikelihood"][i][0].get<double>()) << i;
        EXPECT_EQ(got[i].is_greedy, c["loglikelihood"][i][1].get<bool>()) << i;
      }
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
      auto recs = servers();
      ASSERT_EQ(recs.size(), 1u);
      std::vector<std::string> argv = recs[0]["argv"];
      EXPECT_EQ(argv[0], "--model-path");
      EXPECT_EQ(argv[1], model_dir().string());
      expect_same_engine_options(c["engine_kwargs"][0], options_as_kwargs(argv));
    }
    // The model gone, its server and the server's scheduler process are gone too.
    for (const auto& r : servers()) {
      EXPECT_FALSE(alive(r["pid"].get<pid_t>()));
      EXPECT_FALSE(alive(r["engine_pid"].get<pid_t>()));
    }
  }
}

TEST_F(SglangFake, ServerThatExitsShowsItsLog) {
  ::setenv("FAKE_SGLANG_FAIL", "1", 1);
  try {
    make(Json{{"no_such_engine_option", "1"}});
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("SGLang server exited with status 3 before it was ready"), std::string::npos)
        << m;
    EXPECT_NE(m.find("unrecognized arguments for the fake engine"), std::string::npos) << m;
    EXPECT_NE(m.find("--no-such-engine-option 1"), std::string::npos) << m;  // passed through
  }
}

// A credential among the pass-through keys reaches the server (and authorises the requests) but
// no message: the command line and the log's tail are masked.
TEST_F(SglangFake, ApiKeyPassesThroughButIsNeverShown) {
  const std::string key = "sk-sglang-secret-4242";
  {
    auto lm = make(Json{{"api_key", key}});
    auto got = lm->loglikelihood({{"Once upon a time", " there was"}});
    EXPECT_DOUBLE_EQ(got[0].loglikelihood,
                     goldens()["cases"][0]["loglikelihood"][0][0].get<double>());
    std::vector<std::string> argv = servers()[0]["argv"];
    auto at = std::find(argv.begin(), argv.end(), "--api-key");
    ASSERT_NE(at, argv.end());
    EXPECT_EQ(*(at + 1), key);
  }
  clear_records();
  ::setenv("FAKE_SGLANG_FAIL", "1", 1);
  try {
    make(Json{{"api_key", key}});
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unrecognized arguments"), std::string::npos) << m;
    EXPECT_EQ(m.find(key), std::string::npos) << m;
    EXPECT_NE(m.find("--api-key ***"), std::string::npos) << m;
  }
}

TEST_F(SglangFake, ServerNeverReadyTimesOutAndIsStopped) {
  ::setenv("FAKE_SGLANG_NEVER_READY", "1", 1);
  try {
    make(Json{{"server_timeout", "1.5"}});
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("SGLang server was not ready"), std::string::npos) << m;
    EXPECT_NE(m.find("server_timeout"), std::string::npos) << m;
  }
  auto recs = servers();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_FALSE(alive(recs[0]["pid"].get<pid_t>()));
  EXPECT_FALSE(alive(recs[0]["engine_pid"].get<pid_t>()));
}

TEST_F(SglangFake, WithoutTheSglangPackageSaysSo) {
  ::setenv("PYTHONPATH", scratch_.path().c_str(), 1);
  try {
    make(Json::object());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("package `sglang` is not installed"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.where().field, "--model sglang");
  }
}

// A whole run through the binary, stopped with `sig` while its requests are in flight: lm-eval
// ends and its server and the server's scheduler process are gone. Returns lm-eval's stderr.
std::string SglangFake::run_and_signal(int sig) {
  scratch_.write("data/test.jsonl", "{\"q\": \"Once upon\", \"a\": \"x\"}\n");
  scratch_.write("tasks/tg.yaml",
                 "task: tg\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                 "    test: " +
                     (scratch_.path() / "data/test.jsonl").string() +
                     "\noutput_type: generate_until\ntest_split: test\ndoc_to_text: q\n"
                     "doc_to_target: a\ngeneration_kwargs:\n  until: [\"\\n\"]\n");
  const fs::path pidfile = scratch_.path() / "lmeval.pid";
  const std::string cmd =
      "cd '" + scratch_.path().string() + "' && FAKE_SGLANG_DELAY_S=60 LMEVAL_NO_INDEX_CACHE=1 '" +
      lmeval::testing::lmeval_binary().string() +
      "' run --model sglang --model_args pretrained=" + model_dir().string() +
      " --tasks tg --include_path tasks >out.txt 2>err.txt & echo $! > '" + pidfile.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  pid_t lmeval_pid = 0;
  std::ifstream(pidfile) >> lmeval_pid;
  if (lmeval_pid <= 0) {
    ADD_FAILURE() << "no pid";
    return "";
  }
  bool in_flight = false;  // the server has a request: the run is in generate_until
  for (int i = 0; i < 300 && !in_flight; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    in_flight = !bodies().empty();
  }
  auto recs = servers();
  if (!in_flight || recs.size() != 1u) {
    ADD_FAILURE() << lmeval::testing::read_file(scratch_.path() / "err.txt");
    ::kill(lmeval_pid, SIGKILL);
    return "";
  }
  EXPECT_TRUE(alive(recs[0]["pid"].get<pid_t>()));
  ::kill(lmeval_pid, sig);
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ended = !alive(lmeval_pid);
  }
  EXPECT_TRUE(ended);
  EXPECT_FALSE(alive(recs[0]["pid"].get<pid_t>()));
  EXPECT_FALSE(alive(recs[0]["engine_pid"].get<pid_t>()));
  return lmeval::testing::read_file(scratch_.path() / "err.txt");
}

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

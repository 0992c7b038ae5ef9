// What the tests of --model vllm and --model sglang share: a fixture that puts a fake engine
// package (tests/models/api/fake_vllm or fake_sglang) first on PYTHONPATH with its records in a
// scratch folder, reads those records back, and checks what both engines must do alike (start
// failures show the log, credentials are masked, a server never ready is stopped, a missing
// package is named, stop signals leave no server behind); the goldens' model_args strings and
// the servers' options read back as engine keywords, compared with the reference's; the checks
// of both model_args parsers and registry entries.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/child_process.hpp"
#include "models/api/managed_server.hpp"
#include "models/api/one_doc_run.hpp"
#include "models/model_arg_docs.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api::engine_test {

namespace fs = std::filesystem;

inline const fs::path& model_dir() {
  static const fs::path p = lmeval::testing::source_dir() / "models" / "stories260K";
  return p;
}

inline Json golden(const std::string& name) {
  std::ifstream in(lmeval::testing::source_dir() / "tests/models/api/goldens" / name);
  return Json::parse(in);
}

// The reference's simple_parse_args_string, for the goldens' model_args strings (values as text;
// the backend coerces them as it does CLI values).
inline Json parse_kv(const std::string& s) {
  Json out = Json::object();
  std::stringstream ss(s);
  for (std::string kv; std::getline(ss, kv, ',');) {
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

// The requests of a goldens file (its "requests": the reference's own were these).
struct GoldenRequests {
  std::vector<LoglikelihoodRequest> loglikelihood;
  std::vector<std::string> rolling;
  std::vector<GenerationRequest> generate;
};

inline GoldenRequests golden_requests(const Json& goldens) {
  const Json& req = goldens["requests"];
  GoldenRequests out;
  for (const auto& r : req["loglikelihood"]) out.loglikelihood.push_back({r[0], r[1]});
  for (const auto& r : req["loglikelihood_rolling"]) out.rolling.push_back(r);
  for (const auto& r : req["generate_until"]) out.generate.push_back({r[0], r[1]});
  return out;
}

// Each answer equal to the reference's [loglikelihood, is_greedy] pair.
inline void expect_loglikelihoods(const std::vector<LoglikelihoodResult>& got, const Json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i].loglikelihood, want[i][0].get<double>()) << i;
    EXPECT_EQ(got[i].is_greedy, want[i][1].get<bool>()) << i;
  }
}

// A server's options read back as the engine's keywords: --a-b V -> a_b: V, a bare flag -> True,
// --no-flag -> False; numbers as numbers.
inline Json options_as_kwargs(const std::vector<std::string>& argv) {
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
    } else if (key.rfind("no_", 0) == 0) {
      out[key.substr(3)] = false;
    } else {
      out[key] = true;
    }
  }
  return out;
}

// How an engine's keywords in the goldens (vllm.LLM's, sglang.Engine's) stand in its server's
// options, beyond a value passed as the same option: the model's keyword is checked apart (its
// path is relative in the goldens); None is never passed.
struct EngineOptionRules {
  std::string model_key;                      // vllm: model; sglang: model_path
  bool false_is_absent = false;               // sglang: False (store_true's default) not passed
  std::set<std::string> false_may_be_absent;  // a False the server has as its default
  std::set<std::string> server_only;          // options with no keyword of the reference's
};

// The server's `options` (options_as_kwargs) are the reference's keywords `kwargs`, no more.
inline void expect_same_engine_options(const Json& kwargs, Json options,
                                       const EngineOptionRules& rules) {
  options.erase("host");  // the server's own
  options.erase("port");
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
    const std::string& k = it.key();
    const Json& want = it.value();
    if (k == rules.model_key) {
      EXPECT_TRUE(options.contains(k));
      options.erase(k);
      continue;
    }
    if (want.is_null() || (rules.false_is_absent && want == false)) {
      EXPECT_FALSE(options.contains(k)) << k << " passed though the reference passes " << want;
      continue;
    }
    if (want == false && rules.false_may_be_absent.count(k) && !options.contains(k)) continue;
    ASSERT_TRUE(options.contains(k)) << k << " missing; options: " << options.dump();
    if (want.is_number() && options[k].is_number())
      EXPECT_DOUBLE_EQ(options[k].get<double>(), want.get<double>()) << k;
    else
      EXPECT_EQ(options[k], want) << k;
    options.erase(k);
  }
  for (const auto& k : rules.server_only) options.erase(k);
  EXPECT_TRUE(options.empty()) << "options the reference does not pass: " << options.dump();
}

// Each of the goldens' "cases" and "mappings" with its model_args parsed, pretrained= the model.
inline void for_each_golden_mapping(const Json& goldens,
                                    const std::function<void(const Json& c, Json args)>& check) {
  std::vector<Json> all;
  for (const auto& c : goldens["cases"]) all.push_back(c);
  for (const auto& m : goldens["mappings"]) all.push_back(m);
  for (const auto& c : all) {
    SCOPED_TRACE(c["model_args"].get<std::string>());
    Json args = parse_kv(c["model_args"].get<std::string>());
    args["pretrained"] = model_dir().string();
    check(c, std::move(args));
  }
}

// A server command of at least `min_size` words: the interpreter, `-m module`, its options.
inline ::testing::AssertionResult runs_module(const ServerCommand& cmd, const std::string& module,
                                              size_t min_size) {
  if (cmd.argv.size() < min_size)
    return ::testing::AssertionFailure() << cmd.argv.size() << " words, expected " << min_size;
  if (cmd.argv[1] != "-m" || cmd.argv[2] != module)
    return ::testing::AssertionFailure() << cmd.argv[1] << " " << cmd.argv[2];
  return ::testing::AssertionSuccess();
}

// parse(args, options) refuses `args` (pretrained=m added) with a UserError naming `field`.
template <class Parse>
void expect_refused(const Parse& parse, Json args, const std::string& field,
                    const ModelOptions& options = {}) {
  args["pretrained"] = "m";
  try {
    parse(args, options);
    ADD_FAILURE() << field;
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, field) << e.what();
  }
}

// parse(args, options) refuses model_args without pretrained, naming it.
template <class Parse>
void expect_pretrained_needed(const Parse& parse) {
  try {
    parse(Json::object(), ModelOptions{});
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "--model_args pretrained");
  }
}

// The model is registered, passes unknown keys on to its engine, and docs/ lists its table.
inline void expect_registered_and_documented(const std::string& model) {
  ModelRegistry reg;
  register_api_models(reg);
  const ModelInfoEntry* e = reg.find(model);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->passes_other_args);
  lmeval::testing::expect_documented(model, e->args);
}

// Which fake: the model name, the fake package's folder, its variables' prefix (FAKE_VLLM:
// FAKE_VLLM_RECORD_DIR, _FAIL, _NEVER_READY, _DELAY_S) and the server's name in messages.
struct EngineFakeSpec {
  std::string model;     // vllm
  std::string fake_dir;  // fake_vllm
  std::string env;       // FAKE_VLLM
  std::string server;    // vLLM server
};

class EngineFake : public ::testing::Test {
 protected:
  explicit EngineFake(EngineFakeSpec spec)
      : spec_(std::move(spec)), scratch_("lmeval_" + spec_.model) {}

  void SetUp() override {
    const char* v = std::getenv("VIRTUAL_ENV");
    saved_venv_ = v ? std::optional<std::string>(v) : std::nullopt;
    ::unsetenv("VIRTUAL_ENV");
    ::setenv("PYTHONPATH",
             (lmeval::testing::source_dir() / "tests/models/api" / spec_.fake_dir).c_str(), 1);
    ::setenv(var("RECORD_DIR").c_str(), scratch_.path().c_str(), 1);
    for (const char* k : {"FAIL", "NEVER_READY", "DELAY_S"}) ::unsetenv(var(k).c_str());
    registry_ = std::make_unique<ModelRegistry>();
    register_api_models(*registry_);
  }
  void TearDown() override {
    if (saved_venv_) ::setenv("VIRTUAL_ENV", saved_venv_->c_str(), 1);
    ::unsetenv("PYTHONPATH");
  }
  std::string var(const std::string& suffix) const { return spec_.env + "_" + suffix; }
  std::unique_ptr<LM> make(Json args) {
    args["pretrained"] = model_dir().string();
    return registry_->find(spec_.model)->factory(args, {});
  }
  // The fake servers' records (server_<port>.json), and the request bodies they received.
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

  // One server was started, with the model folder after `model_flag` and then the reference's
  // engine keywords `kwargs`.
  void expect_one_server_started_with(const std::string& model_flag, const Json& kwargs,
                                      const EngineOptionRules& rules) const {
    auto recs = servers();
    ASSERT_EQ(recs.size(), 1u);
    std::vector<std::string> argv = recs[0]["argv"];
    EXPECT_EQ(argv[0], model_flag);
    EXPECT_EQ(argv[1], model_dir().string());
    expect_same_engine_options(kwargs, options_as_kwargs(argv), rules);
  }

  // Every server started and its engine process are gone.
  void expect_servers_and_engines_gone() const {
    for (const auto& r : servers()) {
      EXPECT_FALSE(lmeval::testing::alive(r["pid"].get<pid_t>()));
      EXPECT_FALSE(lmeval::testing::alive(r["engine_pid"].get<pid_t>()));
    }
  }

  // A server that exits at once: the message says so, with the log's tail (holding
  // `log_line`) and the passed-through option.
  void expect_exit_shows_log(const std::string& log_line) {
    ::setenv(var("FAIL").c_str(), "1", 1);
    try {
      make(Json{{"no_such_engine_option", "1"}});
      FAIL();
    } catch (const RuntimeError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(spec_.server + " exited with status 3 before it was ready"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find(log_line), std::string::npos) << m;                     // the log's tail
      EXPECT_NE(m.find("--no-such-engine-option 1"), std::string::npos) << m;  // passed through
    }
  }

  // A credential among the pass-through keys reaches the server (and authorises the requests)
  // but no message: the command line and the log's tail (holding `log_line`) are masked.
  // `first_loglikelihood`: the golden answer to ("Once upon a time", " there was").
  void expect_key_passed_but_hidden(const std::string& key, double first_loglikelihood,
                                    const std::string& log_line) {
    {
      auto lm = make(Json{{"api_key", key}});
      auto got = lm->loglikelihood({{"Once upon a time", " there was"}});
      EXPECT_DOUBLE_EQ(got[0].loglikelihood, first_loglikelihood);
      std::vector<std::string> argv = servers()[0]["argv"];
      auto at = std::find(argv.begin(), argv.end(), "--api-key");
      ASSERT_NE(at, argv.end());
      EXPECT_EQ(*(at + 1), key);
    }
    clear_records();
    ::setenv(var("FAIL").c_str(), "1", 1);
    try {
      make(Json{{"api_key", key}});
      FAIL();
    } catch (const RuntimeError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(log_line), std::string::npos) << m;
      EXPECT_EQ(m.find(key), std::string::npos) << m;
      EXPECT_NE(m.find("--api-key ***"), std::string::npos) << m;
    }
  }

  // A server never ready: the wait ends after server_timeout, naming it, and the server and its
  // engine process are stopped. `not_ready`: what the message says.
  void expect_never_ready_stopped(const std::string& not_ready) {
    ::setenv(var("NEVER_READY").c_str(), "1", 1);
    try {
      make(Json{{"server_timeout", "1.5"}});
      FAIL();
    } catch (const RuntimeError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(not_ready), std::string::npos) << m;
      EXPECT_NE(m.find("server_timeout"), std::string::npos) << m;
    }
    auto recs = servers();
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_FALSE(lmeval::testing::alive(recs[0]["pid"].get<pid_t>()));
    EXPECT_FALSE(lmeval::testing::alive(recs[0]["engine_pid"].get<pid_t>()));
  }

  // Without the engine's package in the environment: exit 2 naming the package and --model.
  void expect_missing_package_named() {
    ::setenv("PYTHONPATH", scratch_.path().c_str(), 1);
    try {
      make(Json::object());
      FAIL();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("package `" + spec_.model + "` is not installed"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.where().field, "--model " + spec_.model);
    }
  }

  // A whole run through the binary, stopped with `sig` while its requests are in flight:
  // lm-eval ends and its server and the server's engine process are gone. Returns lm-eval's
  // stderr.
  std::string run_and_signal(int sig) {
    using lmeval::testing::alive;
    api::test::write_one_doc_task(scratch_, "Once upon");
    const fs::path pidfile = scratch_.path() / "lmeval.pid";
    const std::string cmd = "cd '" + scratch_.path().string() + "' && " + var("DELAY_S") +
                            "=60 LMEVAL_NO_INDEX_CACHE=1 '" +
                            lmeval::testing::lmeval_binary().string() + "' run --model " +
                            spec_.model + " --model_args pretrained=" + model_dir().string() +
                            " --tasks tg --include_path tasks >out.txt 2>err.txt & echo $! > '" +
                            pidfile.string() + "'";
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

  EngineFakeSpec spec_;
  lmeval::testing::ScratchDir scratch_;
  std::optional<std::string> saved_venv_;
  std::unique_ptr<ModelRegistry> registry_;
};

}  // namespace lmeval::api::engine_test

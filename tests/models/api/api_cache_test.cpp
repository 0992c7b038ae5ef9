// --use_cache around an API model (issue 32 point 5): every answer received before a stop or a
// failed request is in the cache, whatever the chunk, and a rerun asks the server only for the
// rest. It lost the whole chunk in flight (SIGTERM after 49 answers left 0 stored; an HTTP 500
// after 300 answers kept 256).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <regex>

#include "lmeval/core/error.hpp"
#include "lmeval/core/stop_signal.hpp"
#include "lmeval/models/caching_lm.hpp"
#include "lmeval/models/response_store.hpp"
#include "models/api/api_lm.hpp"
#include "models/api/fake_server.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace lmeval::api {
namespace {

using test::completions;
using test::FakeReply;
using test::FakeServer;

constexpr size_t kRequests = 12;
constexpr size_t kAnswered = 5;

fs::path stories() { return testing::source_dir() / "models" / "stories260K"; }

ApiArgs args_for(const std::string& url) {
  Json a = Json::object();
  a["model"] = "stories";
  a["base_url"] = url;
  a["tokenizer"] = stories().string();
  a["max_retries"] = 1;
  ApiArgs args = parse_api_args(ApiKind::kLocalCompletions, a, {});
  args.retry.min_wait_s = 0.01;
  args.retry.max_wait_s = 0.01;
  return args;
}

struct Cache {
  testing::ScratchDir dir{"lmeval_api_cache"};
  fs::path prefix = dir.path() / "c";
  fs::path db = dir.path() / "c_rank0.db";
  std::unique_ptr<LM> open(const std::string& url) const {
    return make_caching_lm(std::make_unique<ApiLM>(args_for(url), load_tokenizer(stories())),
                           prefix, cache_identity("local-completions", {{"model", "stories"}}));
  }
  size_t stored() const { return ResponseStore::count(db).value_or(0); }
};

std::vector<LoglikelihoodRequest> ll_requests() {
  std::vector<LoglikelihoodRequest> r;
  for (size_t i = 0; i < kRequests; ++i)
    r.push_back({"Once upon a time " + std::to_string(i), " x"});
  return r;
}
std::vector<std::string> texts() {
  std::vector<std::string> r;
  for (size_t i = 0; i < kRequests; ++i) r.push_back("Lily went home " + std::to_string(i));
  return r;
}
std::vector<GenerationRequest> gen_requests() {
  std::vector<GenerationRequest> r;
  for (size_t i = 0; i < kRequests; ++i)
    r.push_back({"Tell me " + std::to_string(i), Json{{"until", Json::array({"\n"})}}});
  return r;
}

// Calls `method` of `lm` on the fixed requests.
void call(LM& lm, const std::string& method) {
  if (method == "loglikelihood")
    lm.loglikelihood(ll_requests());
  else if (method == "loglikelihood_rolling")
    lm.loglikelihood_rolling(texts());
  else
    lm.generate_until(gen_requests());
}

class ApiCache : public ::testing::TestWithParam<std::string> {};

// A stop noticed after kAnswered answers (the CLI's progress callback throws Interrupted): the
// cache holds exactly those, and the rerun sends only the others.
TEST_P(ApiCache, StopAfterNAnswersKeepsExactlyN) {
  auto tok = load_tokenizer(stories());
  FakeServer server(
      [&](const std::string&, const Json& b, int) { return completions(b, tok.get()); });
  Cache cache;
  auto lm = cache.open(server.url());
  lm->set_progress([](size_t done, size_t, int64_t) {
    if (done >= kAnswered) throw Interrupted(SIGTERM, "interrupted by SIGTERM");
  });
  EXPECT_THROW(call(*lm, GetParam()), Interrupted);
  EXPECT_EQ(server.calls(), static_cast<int>(kAnswered));
  lm.reset();
  EXPECT_EQ(cache.stored(), kAnswered);

  auto again = cache.open(server.url());
  call(*again, GetParam());
  EXPECT_EQ(server.calls(), static_cast<int>(kRequests)) << "the rerun asked again for answers";
  EXPECT_EQ(cache.stored(), kRequests);
}

// The server fails request kAnswered + 1 (HTTP 500, no retry left): the run fails, the answers
// before it are stored, and the rerun against a healthy server sends only the others.
TEST_P(ApiCache, FailedRequestAfterNAnswersKeepsExactlyN) {
  auto tok = load_tokenizer(stories());
  std::atomic<bool> healthy{false};
  FakeServer server([&](const std::string&, const Json& b, int call) {
    if (!healthy && call >= static_cast<int>(kAnswered)) return FakeReply{500, "{\"error\":\"x\"}"};
    return completions(b, tok.get());
  });
  Cache cache;
  auto lm = cache.open(server.url());
  try {
    call(*lm, GetParam());
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("500"), std::string::npos) << e.what();
  }
  lm.reset();
  EXPECT_EQ(cache.stored(), kAnswered);

  healthy = true;
  const int before = server.calls();
  auto again = cache.open(server.url());
  call(*again, GetParam());
  EXPECT_EQ(server.calls() - before, static_cast<int>(kRequests - kAnswered));
  EXPECT_EQ(cache.stored(), kRequests);
}

INSTANTIATE_TEST_SUITE_P(Methods, ApiCache,
                         ::testing::Values("loglikelihood", "loglikelihood_rolling",
                                           "generate_until"));

// The same through the binary: SIGTERM while request kAnswered + 1 is in flight. The stop line
// counts the answers stored, the cache holds them, and the rerun asks only for the rest.
TEST(ApiCache_Cli, SigtermAfterNAnswersKeepsThemAndResumes) {
  auto tok = load_tokenizer(stories());
  std::atomic<pid_t> child{-1};
  FakeServer server([&](const std::string&, const Json& b, int call) {
    FakeReply r = completions(b, tok.get());
    if (call == static_cast<int>(kAnswered) && child > 0) {
      ::kill(child, SIGTERM);
      r.delay_ms = 2000;  // never received: the run stops first
    }
    return r;
  });
  testing::ScratchDir dir("lmeval_api_cache_cli");
  const std::string cmd =
      "cd '" + dir.path().string() + "' && exec '" + testing::lmeval_binary().string() +
      "' run --model local-completions --model_args model=stories,base_url=" + server.url() +
      ",tokenizer=" + stories().string() +
      " --tasks demo_story_cloze --limit 5 --use_cache cache/c --output_path "
      "out >stdout.txt 2>stderr.txt";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  child = pid;
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string err = testing::read_file(dir.path() / "stderr.txt");
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 143) << err;
  EXPECT_NE(err.find("no results written; " + std::to_string(kAnswered) +
                     " answers are stored in cache/c_rank0.db"),
            std::string::npos)
      << err;
  EXPECT_EQ(ResponseStore::count(dir.path() / "cache/c_rank0.db").value_or(0), kAnswered);

  child = -1;
  const int before = server.calls();
  auto again = testing::run_command(
      "cd '" + dir.path().string() + "' && '" + testing::lmeval_binary().string() +
      "' run --model local-completions --model_args model=stories,base_url=" + server.url() +
      ",tokenizer=" + stories().string() +
      " --tasks demo_story_cloze --limit 5 --use_cache cache/c --output_path out");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.calls() - before, 15 - static_cast<int>(kAnswered));  // 5 stories x 3 endings
}

}  // namespace
}  // namespace lmeval::api

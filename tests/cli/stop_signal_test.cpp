// SIGINT, SIGTERM and SIGHUP sent to a running lm-eval (dummy model slowed by
// LMEVAL_DUMMY_DELAY_MS): exit 128 + signal, one line on how to resume, no results written, the
// response cache kept for the rerun. SIGKILL while the outputs are written: a results file never
// sits beside missing or partial samples (LMEVAL_TEST_WRITE_DELAY_MS widens the window).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::read_file;
using lmeval::testing::run_command;

namespace {

using Clock = std::chrono::steady_clock;

class StopSignal : public ::testing::Test {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Starts `env lm-eval args` in dir_ (stdout and stderr to files).
  void start(const std::string& env, const std::string& args) {
    fs::remove(dir_ / "stderr.txt");
    fs::remove(dir_ / "stdout.txt");  // a previous run's lines must not look like this one's
    std::string cmd = "cd '" + dir_.string() + "' && exec env LMEVAL_NO_INDEX_CACHE=1 " + env +
                      " '" + lmeval::testing::lmeval_binary().string() + "' " + args +
                      " >stdout.txt 2>stderr.txt";
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  std::string err() const { return read_file(dir_ / "stderr.txt"); }
  // Waits (up to 60 s) until `ready` holds; false if the process ended first or time ran out.
  template <class Pred>
  bool wait_until(Pred ready) {
    auto end = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < end) {
      if (ready()) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  bool stderr_has(const std::string& s) const { return err().find(s) != std::string::npos; }
  // spdlog's default logger writes to stdout.
  bool log_has(const std::string& s) const {
    return read_file(dir_ / "stdout.txt").find(s) != std::string::npos || stderr_has(s);
  }
  // Sends `sig`, waits, returns the exit code (128 + n for death by signal n).
  int signal_and_wait(int sig) {
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // Files under dir_/out whose name starts with `prefix` (hidden temporary files excluded).
  std::vector<fs::path> outputs(const std::string& prefix) const {
    std::vector<fs::path> v;
    if (!fs::exists(dir_ / "out")) return v;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "out"))
      if (e.path().filename().string().rfind(prefix, 0) == 0) v.push_back(e.path());
    return v;
  }
  size_t all_files_under_out() const {
    size_t n = 0;
    if (fs::exists(dir_ / "out"))
      for (const auto& e : fs::recursive_directory_iterator(dir_ / "out")) n += e.is_regular_file();
    return n;
  }

  lmeval::testing::ScratchDir scratch_{"lmeval_stop"};
  const fs::path dir_ = scratch_.path();
  pid_t pid_ = -1;
};

const std::string kArgs =
    "run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --log_samples "
    "--output_path out";

}  // namespace

// SIGINT in the model phase with --use_cache: 130, the resume line, no results; the rerun finds
// the answers stored before the signal and ends with the same results as an uninterrupted run.
TEST_F(StopSignal, SigintDuringModelPhaseKeepsCacheAndResumes) {
  // One chunk of 1000: answers must be stored as they come, not when the chunk returns.
  start("LMEVAL_DUMMY_DELAY_MS=20 LMEVAL_CACHE_CHUNK=1000",
        kArgs + " --use_cache cache/c --verbosity INFO");
  ASSERT_TRUE(wait_until([&] { return log_has("--use_cache: 0 of "); })) << err();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(signal_and_wait(SIGINT), 130) << err();
  std::string e = err();
  // The line says how many answers the cache holds (issue 32: it claimed answers when none
  // were stored), and that count is what the rerun finds.
  const std::string head = "lm-eval: interrupted by SIGINT: no results written; ";
  const size_t at = e.find(head);
  ASSERT_NE(at, std::string::npos) << e;
  const size_t stored = std::stoul(e.substr(at + head.size()));
  EXPECT_GT(stored, 0u) << e;
  EXPECT_NE(e.find(" answers are stored in cache/c_rank0.db: run the same command (same "
                   "--use_cache cache/c) to resume from them"),
            std::string::npos)
      << e;
  EXPECT_TRUE(outputs("results_").empty());
  EXPECT_TRUE(outputs("samples_").empty());
  EXPECT_TRUE(fs::exists(dir_ / "cache/c_rank0.db"));

  auto again = run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                           lmeval::testing::lmeval_binary().string() + "' " + kArgs +
                           " --use_cache cache/c --verbosity INFO");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ((again.out + again.err).find("--use_cache: 0 of "), std::string::npos)
      << "nothing was kept: " << again.out;
  EXPECT_NE((again.out + again.err)
                .find("--use_cache: " + std::to_string(stored) +
                      " of 120 loglikelihood requests answered from cache/c_rank0.db"),
            std::string::npos)
      << again.out;
  // An uninterrupted run with a fresh cache of the same name (so the recorded config is equal).
  fs::create_directories(dir_ / "w");
  auto whole = run_command("cd '" + (dir_ / "w").string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                           lmeval::testing::lmeval_binary().string() + "' " + kArgs +
                           " --use_cache cache/c");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(lmeval::testing::results_without_timings(dir_ / "out"),
            lmeval::testing::results_without_timings(dir_ / "w/out"));
  EXPECT_EQ(lmeval::testing::samples_of(dir_ / "out", "demo_story_cloze"),
            lmeval::testing::samples_of(dir_ / "w/out", "demo_story_cloze"));
}

// A stop before the first answer: the line does not claim answers to resume from. (Answers are
// stored as they come, so the signal arrives while the first request takes 2 s.)
TEST_F(StopSignal, StopBeforeAnyAnswerIsStoredSaysSo) {
  start("LMEVAL_DUMMY_DELAY_MS=2000 LMEVAL_CACHE_CHUNK=1000",
        kArgs + " --use_cache cache/c --verbosity INFO");
  ASSERT_TRUE(wait_until([&] { return log_has("--use_cache: 0 of "); })) << err();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(signal_and_wait(SIGTERM), 143) << err();
  const std::string e = err();
  EXPECT_NE(e.find("no results written; no answers were stored in cache/c_rank0.db yet"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("to resume"), std::string::npos) << e;
}

TEST_F(StopSignal, SigtermAndSighupDuringModelPhase) {
  for (auto [sig, name, code] :
       {std::tuple{SIGTERM, "SIGTERM", 143}, std::tuple{SIGHUP, "SIGHUP", 129}}) {
    start("LMEVAL_DUMMY_DELAY_MS=20 LMEVAL_PROGRESS=1", kArgs);
    ASSERT_TRUE(wait_until([&] { return stderr_has("loglikelihood requests"); })) << err();
    EXPECT_EQ(signal_and_wait(sig), code) << err();
    std::string e = err();
    EXPECT_NE(e.find(std::string("lm-eval: interrupted by ") + name +
                     ": no results written; add --use_cache PATH to a run to make it resumable"),
              std::string::npos)
        << e;
    EXPECT_EQ(all_files_under_out(), 0u) << name;
  }
}

// SIGINT while the staged outputs wait to be renamed: nothing at all is left, temporary files
// included.
TEST_F(StopSignal, SigintWhileWritingLeavesNothing) {
  start("LMEVAL_TEST_WRITE_DELAY_MS=3000", kArgs);
  ASSERT_TRUE(wait_until([&] { return all_files_under_out() > 0; })) << err();
  EXPECT_EQ(signal_and_wait(SIGINT), 130) << err();
  EXPECT_EQ(all_files_under_out(), 0u);
  EXPECT_NE(err().find("no results written"), std::string::npos) << err();
}

// SIGKILL at each stage of the writing: staged only, samples renamed, everything renamed. A
// results file is only ever there with its complete samples file.
TEST_F(StopSignal, SigkillWhileWritingNeverLeavesResultsBesidePartialSamples) {
  for (int stage = 0; stage < 3; ++stage) {
    fs::remove_all(dir_ / "out");
    start("LMEVAL_TEST_WRITE_DELAY_MS=1500", kArgs);
    ASSERT_TRUE(wait_until([&] {
      if (stage == 0) return all_files_under_out() > 0;
      if (stage == 1) return !outputs("samples_").empty();
      return !outputs("results_").empty();
    })) << "stage "
        << stage << ": " << err();
    signal_and_wait(SIGKILL);
    auto results = outputs("results_"), samples = outputs("samples_");
    EXPECT_EQ(results.size(), stage == 2 ? 1u : 0u) << stage;
    EXPECT_EQ(samples.size(), stage == 0 ? 0u : 1u) << stage;
    for (const auto& s : samples) EXPECT_EQ(lmeval::testing::read_jsonl(s).size(), 40u) << s;
  }
}

// Issue 32: `threads=4096` on 2 cores ran 30x slower and ignored SIGTERM. The threads are capped
// to the machine's cores; one SIGTERM in the model phase ends the run within the 5 s bound.
TEST_F(StopSignal, SigtermStopsAnHfRunAskedForThousandsOfThreads) {
  if (run_command("'" + lmeval::testing::lmeval_binary().string() + "' ls models")
          .out.find("|hf ") == std::string::npos)
    GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  start("LMEVAL_PROGRESS=1",
        "run --model hf --model_args pretrained='" +
            (lmeval::testing::source_dir() / "models/stories260K").string() +
            "',threads=4096 --device cpu --tasks demo_story_cloze --output_path out");
  ASSERT_TRUE(wait_until([&] { return stderr_has("loglikelihood requests"); })) << err();
  const auto sent = Clock::now();
  EXPECT_EQ(signal_and_wait(SIGTERM), 143) << err();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - sent).count(), 6.0) << err();
  EXPECT_TRUE(stderr_has("threads=4096 is more than the ")) << err();
  EXPECT_TRUE(stderr_has("lm-eval: interrupted by SIGTERM: no results written")) << err();
  EXPECT_EQ(all_files_under_out(), 0u);
}

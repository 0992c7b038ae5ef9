// Issue 32 point 4: Python helpers that crash or hang end the run with exit 2 naming the YAML
// line, the function and its module (a segfault killed lm-eval with SIGSEGV; a hang ran forever),
// and one SIGTERM stops a run within a few seconds whatever a helper or a template does, a
// helper that ignores the stop signals included; a second signal stops at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "lmeval/core/stop_signal.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

class HelperFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.write("data/test.jsonl",
                   "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
                   "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
  }
  // tasks/tx.yaml, a multiple-choice task whose doc_to_text is `doc_to_text` (line 8).
  void task(const std::string& doc_to_text) {
    scratch_.write("tasks/tx.yaml",
                   "task: tx\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                       (dir_ / "data/test.jsonl").string() +
                       "\noutput_type: multiple_choice\ntest_split: test\ndoc_to_text: " +
                       doc_to_text + "\ndoc_to_choice: choices\ndoc_to_target: label\n");
  }
  // For run_command: bounded (timeout), so a hang fails the test instead of hanging it.
  std::string bounded(const std::string& env = "") const {
    return "cd '" + dir_.string() + "' && timeout -s KILL 60 env LMEVAL_NO_INDEX_CACHE=1 " + env +
           " '" + lmeval::testing::lmeval_binary().string() +
           "' run --model dummy --include_path tasks --tasks tx --output_path out";
  }
  std::string command(const std::string& env = "") const {
    return "cd '" + dir_.string() + "' && exec env LMEVAL_NO_INDEX_CACHE=1 " + env + " '" +
           lmeval::testing::lmeval_binary().string() +
           "' run --model dummy --include_path tasks --tasks tx --output_path out";
  }
  // Starts the run in the background, its stderr in err.txt.
  void start(const std::string& env = "") {
    const std::string cmd = command(env) + " >out.txt 2>err.txt";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  bool wait_for_file(const fs::path& p, int seconds = 60) const {
    for (int i = 0; i < seconds * 100; ++i) {
      if (fs::exists(p)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // Exit code (128 + n for death by signal n); -1 (after a SIGKILL) when the run is still there
  // after 30 s, so a run that ignores its stop fails the test instead of hanging it.
  int wait_exit() {
    int status = 0;
    for (int i = 0; i < 3000; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::string err() const { return lmeval::testing::read_file(dir_ / "err.txt"); }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  lmeval::testing::ScratchDir scratch_{"lmeval_helper_faults"};
  const fs::path dir_ = scratch_.path();
  pid_t pid_ = -1;
};

// A helper that never returns and has ignored SIGINT and SIGTERM, through Python's signal module
// and through libc, and blocked them in its thread: one SIGTERM still ends the run, within the
// grace period, naming the helper.
constexpr const char* kStubborn =
    "import ctypes, signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "ctypes.CDLL(None).signal(15, ctypes.c_void_p(1))  # SIG_IGN below Python\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})\n"
    "def bad(doc):\n"
    "    open('started', 'w').close()\n"
    "    while True:\n"
    "        pass\n";

}  // namespace

TEST_F(HelperFaults, HelperThatSegfaultsIsAnErrorNamingIt) {
  scratch_.write("tasks/utils.py",
                 "import ctypes\n\ndef bad(doc):\n    return ctypes.string_at(0)\n");
  task("!function utils.bad");
  auto r = lmeval::testing::run_command(bounded());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("lm-eval: error: tasks/tx.yaml:8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tasks/tx.yaml:8: `!function utils.bad` ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("utils.py) crashed (SIGSEGV)"), std::string::npos) << r.err;
}

TEST_F(HelperFaults, HelperThatHangsIsAnErrorAfterTheCallTimeout) {
  scratch_.write("tasks/utils.py", "import time\n\ndef bad(doc):\n    time.sleep(1000)\n");
  task("!function utils.bad");
  const auto t0 = Clock::now();
  auto r = lmeval::testing::run_command(bounded("LMEVAL_PYTHON_CALL_TIMEOUT_S=1"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("tasks/tx.yaml:8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("utils.py) did not return within 1 s"), std::string::npos) << r.err;
  // A module whose import hangs: the same, naming the import.
  scratch_.write("tasks/utils.py",
                 "import time\ntime.sleep(1000)\n\ndef bad(doc):\n    return 1\n");
  r = lmeval::testing::run_command(bounded("LMEVAL_PYTHON_CALL_TIMEOUT_S=1"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("utils.py) while importing did not return within 1 s"), std::string::npos)
      << r.err;
}

TEST_F(HelperFaults, BadCallTimeoutIsRefused) {
  scratch_.write("tasks/utils.py", "def bad(doc):\n    return 'x'\n");
  task("!function utils.bad");
  auto r = lmeval::testing::run_command(bounded("LMEVAL_PYTHON_CALL_TIMEOUT_S=abc"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("LMEVAL_PYTHON_CALL_TIMEOUT_S is 'abc'"), std::string::npos) << r.err;
}

TEST_F(HelperFaults, OneSigtermStopsAHelperThatIgnoresIt) {
  scratch_.write("tasks/utils.py", kStubborn);
  task("!function utils.bad");
  start();
  ASSERT_TRUE(wait_for_file(dir_ / "started")) << err();
  // The libc-level SIG_IGN stands until the watchdog's next look (0.1 s).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(), 143) << err();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(lmeval::kStopGraceSeconds + 3));
  const std::string e = err();
  EXPECT_NE(e.find("lm-eval: interrupted by SIGTERM: the run did not stop within 5 s of the "
                   "signal (busy in tasks/tx.yaml:8"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("`!function utils.bad`"), std::string::npos) << e;
  EXPECT_NE(e.find("no results written"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(HelperFaults, SecondSignalStopsAtOnce) {
  scratch_.write("tasks/utils.py", kStubborn);
  task("!function utils.bad");
  start();
  ASSERT_TRUE(wait_for_file(dir_ / "started")) << err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid_, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  ::kill(pid_, SIGINT);
  EXPECT_EQ(wait_exit(), 130) << err();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

// A template that would run for hours (10^10 loop steps) does not check for stops: the
// watchdog ends the run within the grace period.
TEST_F(HelperFaults, OneSigtermStopsAnEndlessTemplate) {
  task("\"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{q}}\"");
  start();
  // The template is rendered once the task is built: give the run a moment to get there.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto t0 = Clock::now();
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(), 143) << err();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(lmeval::kStopGraceSeconds + 3));
  EXPECT_NE(err().find("interrupted by SIGTERM"), std::string::npos) << err();
}

// The scoring phase: a process_results helper that never returns (the model phase is over).
TEST_F(HelperFaults, OneSigtermStopsAnEndlessScoringHelper) {
  scratch_.write("tasks/utils.py",
                 "def bad(doc, results):\n"
                 "    open('started', 'w').close()\n"
                 "    while True:\n"
                 "        pass\n");
  scratch_.write("tasks/tx.yaml",
                 "task: tx\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                     (dir_ / "data/test.jsonl").string() +
                     "\noutput_type: multiple_choice\ntest_split: test\ndoc_to_text: q\n"
                     "doc_to_choice: choices\ndoc_to_target: label\n"
                     "process_results: !function utils.bad\n");
  start();
  ASSERT_TRUE(wait_for_file(dir_ / "started")) << err();
  const auto t0 = Clock::now();
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(), 143) << err();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(lmeval::kStopGraceSeconds + 3));
  EXPECT_NE(err().find("(busy in tasks/tx.yaml:11: `!function utils.bad`"), std::string::npos)
      << err();
}

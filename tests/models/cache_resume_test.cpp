// --use_cache through the real binary: a rerun computes nothing, a run killed with SIGKILL and
// restarted writes the same results as an uninterrupted run, two processes can share one cache
// file, and a damaged file stops the run with exit code 1 and the file's name.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_file;
using lmeval::testing::run_command;

namespace {

constexpr int kRequests = 120;  // demo_story_cloze: 40 stories x 3 endings

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("lmeval_resume_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
};

// A run in `dir` with the cache at the relative path `c`, so that every run records the same
// config.use_cache. The dummy model sleeps `delay_ms` per request.
std::string command(const fs::path& dir, int delay_ms) {
  return "cd " + dir.string() +
         " && exec env LMEVAL_CACHE_CHUNK=10 LMEVAL_DUMMY_DELAY_MS=" + std::to_string(delay_ms) +
         " " + lmeval_binary().string() +
         " run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --use_cache c"
         " --log_samples --output_path out";
}

pid_t spawn(const std::string& cmd, const std::string& log = "/dev/null") {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", (cmd + " >" + log + " 2>&1").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int rows(const fs::path& db) {
  if (!fs::exists(db)) return 0;
  sqlite3* h = nullptr;
  int n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT count(*) FROM responses", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

std::string normalised_results(const fs::path& dir) {
  return lmeval::testing::results_without_timings(dir / "out");
}

std::string samples(const fs::path& dir) {
  return lmeval::testing::samples_of(dir / "out", "demo_story_cloze");
}

// "N of 120 loglikelihood requests answered from" in a run's log.
int answered_from_cache(const std::string& log) {
  std::smatch m;
  std::regex re("--use_cache: ([0-9]+) of ([0-9]+) loglikelihood");
  return std::regex_search(log, m, re) ? std::stoi(m[1]) : -1;
}

}  // namespace

TEST(Models_CacheResume, RerunComputesNothingAndMatches) {
  Dir plain("plain"), cached("cached");
  auto p = run_command(
      command(plain.path, 0).replace(command(plain.path, 0).find(" --use_cache c"), 14, ""));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto first = run_command(command(cached.path, 0));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(answered_from_cache(first.out + first.err), 0) << first.err;
  fs::remove_all(cached.path / "out");
  auto second = run_command(command(cached.path, 0));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(answered_from_cache(second.out + second.err), kRequests) << second.err;
  EXPECT_EQ(samples(cached.path), samples(plain.path));
  Json a = Json::parse(normalised_results(cached.path)),
       b = Json::parse(normalised_results(plain.path));
  b["config"]["use_cache"] = "c";  // the one field a cached run adds
  EXPECT_EQ(a.dump(1), b.dump(1));
}

TEST(Models_CacheResume, SigkillThenRestartGivesTheSameFiles) {
  Dir whole("whole"), killed("killed");
  ASSERT_EQ(run_command(command(whole.path, 0)).exit_code, 0);

  // 12 chunks of 10 requests at 20 ms a request: kill once 3 chunks are stored.
  pid_t pid = spawn(command(killed.path, 20));
  fs::path db = killed.path / "c_rank0.db";
  int stored = 0;
  for (int i = 0; i < 6000 && stored < 30; ++i) {  // up to a minute on a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stored = rows(db);
  }
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), -1);  // died by the signal, not of its own accord
  stored = rows(db);
  ASSERT_GE(stored, 30);
  ASSERT_LT(stored, kRequests) << "the run finished before it was killed";
  EXPECT_FALSE(fs::exists(killed.path / "out"));

  auto again = run_command(command(killed.path, 0));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(answered_from_cache(again.out + again.err), stored)
      << again.err;  // only the rest was computed
  EXPECT_EQ(rows(db), kRequests);
  EXPECT_EQ(normalised_results(killed.path), normalised_results(whole.path));
  EXPECT_FALSE(samples(whole.path).empty());
  EXPECT_EQ(samples(killed.path), samples(whole.path));
}

TEST(Models_CacheResume, TwoProcessesShareOneFile) {
  Dir whole("whole2"), shared("shared");
  ASSERT_EQ(run_command(command(whole.path, 0)).exit_code, 0);
  fs::create_directories(shared.path / "a");
  fs::create_directories(shared.path / "b");
  // Both use ../c: the same file, written by both at once.
  auto cmd = [&](const char* sub) {
    std::string c = command(shared.path / sub, 10);
    return c.replace(c.find("--use_cache c"), 13, "--use_cache ../c");
  };
  std::string log_a = (shared.path / "a.log").string(), log_b = (shared.path / "b.log").string();
  pid_t a = spawn(cmd("a"), log_a), b = spawn(cmd("b"), log_b);
  EXPECT_EQ(wait_exit(a), 0);
  EXPECT_EQ(wait_exit(b), 0);
  // Each found fewer than all answers when it looked: the two runs overlapped.
  for (const auto& log : {log_a, log_b}) {
    int found = answered_from_cache(read_file(log));
    EXPECT_GE(found, 0) << read_file(log);
    EXPECT_LT(found, kRequests) << read_file(log);
  }
  EXPECT_EQ(rows(shared.path / "c_rank0.db"), kRequests);
  for (const char* sub : {"a", "b"}) {
    Json r = Json::parse(normalised_results(shared.path / sub));
    r["config"]["use_cache"] = "c";
    EXPECT_EQ(r.dump(1), normalised_results(whole.path)) << sub;
    EXPECT_EQ(samples(shared.path / sub), samples(whole.path)) << sub;
  }
  auto third = run_command(cmd("a"));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(answered_from_cache(third.out + third.err), kRequests) << third.err;
}

TEST(Models_CacheResume, DamagedFileExitsOneNamingIt) {
  Dir dir("damaged");
  ASSERT_EQ(run_command(command(dir.path, 0)).exit_code, 0);
  fs::path db = dir.path / "c_rank0.db";
  std::string bytes = read_file(db);
  // Overwrite the middle of the file (row pages) with garbage.
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 2000 && i < bytes.size(); ++i)
    bytes[i] = '\x5a';
  std::ofstream(db, std::ios::binary | std::ios::trunc) << bytes;
  auto r = run_command(command(dir.path, 0));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("c_rank0.db"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("delete it to start over"), std::string::npos) << r.err;

  std::ofstream(db, std::ios::binary | std::ios::trunc) << "not a database at all\n";
  r = run_command(command(dir.path, 0));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("c_rank0.db"), std::string::npos) << r.err;
}

// The cache wraps every backend: hf on a fixture answers a rerun entirely from the file.
TEST(Models_CacheResume, HfRerunComputesNothing) {
  if (lmeval::testing::shared_dir().empty() ||
      !fs::exists(lmeval::testing::shared_dir() / "fixtures/llama/model.safetensors"))
    GTEST_SKIP() << "../shared/fixtures/llama is absent";
  auto models = run_command(lmeval_binary().string() + " ls models");
  if (models.out.find("|hf ") == std::string::npos)
    GTEST_SKIP() << "lm-eval was built without libtorch";
  Dir dir("hf");
  std::string cmd = "cd " + dir.path.string() + " && " + lmeval_binary().string() +
                    " run --model hf --model_args pretrained=" +
                    (lmeval::testing::shared_dir() / "fixtures/llama").string() +
                    " --device cpu --tasks demo_story_cloze --limit 3 --use_cache c --log_samples "
                    "--output_path out";
  auto first = run_command(cmd);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(answered_from_cache(first.out + first.err), 0) << first.out;
  std::string samples_first = samples(dir.path);
  EXPECT_FALSE(samples_first.empty());
  fs::remove_all(dir.path / "out");
  auto second = run_command(cmd);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(answered_from_cache(second.out + second.err), 9) << second.out;
  EXPECT_EQ(samples(dir.path), samples_first);
}

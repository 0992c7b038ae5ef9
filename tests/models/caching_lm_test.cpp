// --use_cache: answers are reused, keyed by model identity, stored chunk by chunk; sampled
// generations are not cached; files that are not our cache are clear errors.
#include "lmeval/models/caching_lm.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "lmeval/core/error.hpp"
#include "lmeval/models/response_store.hpp"

namespace fs = std::filesystem;
using namespace lmeval;

namespace {

struct CountingLM : LM {
  int* calls;
  int fail_after = -1;  // throw on the call after this many calls (a run dying half way)
  int n_calls = 0;
  explicit CountingLM(int* c) : calls(c) {}
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& r) override {
    if (fail_after >= 0 && n_calls++ >= fail_after) throw std::runtime_error("killed");
    *calls += static_cast<int>(r.size());
    std::vector<LoglikelihoodResult> out;
    for (const auto& q : r)
      out.push_back({q.continuation == "inf" ? -std::numeric_limits<double>::infinity()
                                             : -static_cast<double>(q.continuation.size()) / 3.0,
                     true});
    return out;
  }
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& t) override {
    *calls += static_cast<int>(t.size());
    return std::vector<double>(t.size(), -1.5);
  }
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& r) override {
    *calls += static_cast<int>(r.size());
    return std::vector<std::string>(r.size(), "out");
  }
};

// Read once per process, before any test: every test here sends chunks of 2 requests.
[[maybe_unused]] const bool kSmallChunks = ::setenv("LMEVAL_CACHE_CHUNK", "2", 1) == 0;

const Json kModel = cache_identity("counting", {{"pretrained", "a"}});

fs::path db_of(const fs::path& prefix) { return prefix.string() + "_rank0.db"; }

void remove_db(const fs::path& prefix) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_of(prefix).string() + suffix);
}

fs::path temp_prefix(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("lmeval_cache_" + std::to_string(getpid()) + "_" + name);
  remove_db(p);
  return p;
}

void sql(const fs::path& db, const std::string& statement) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

std::string error_of(const fs::path& prefix) {
  int calls = 0;
  try {
    auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
    lm->loglikelihood({{"ctx", " a"}});
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Models_CachingLM, SecondRunRecomputesNothing) {
  auto prefix = temp_prefix("reuse");
  int calls = 0;
  std::vector<LoglikelihoodRequest> reqs = {{"ctx", " a"}, {"ctx", " bb"}, {"ctx", "inf"}};
  {
    auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
    auto r = lm->loglikelihood(reqs);
    EXPECT_EQ(r[1].loglikelihood, -1.0);
    lm->loglikelihood_rolling({"text"});
  }
  EXPECT_TRUE(fs::exists(db_of(prefix)));  // the reference's <path>_rank0 naming
  EXPECT_EQ(calls, 4);
  auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
  auto r = lm->loglikelihood({{"ctx", " bb"}, {"ctx", " new"}, {"ctx", "inf"}, {"ctx", " a"}});
  EXPECT_EQ(r[0].loglikelihood, -1.0);
  EXPECT_TRUE(r[0].is_greedy);
  EXPECT_EQ(r[1].loglikelihood, -4.0 / 3.0);
  EXPECT_EQ(r[2].loglikelihood, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(r[3].loglikelihood, -2.0 / 3.0);  // bit-exact through the file
  EXPECT_EQ(calls, 5);                        // only " new" was computed
  EXPECT_EQ(lm->loglikelihood_rolling({"text"})[0], -1.5);
  EXPECT_EQ(calls, 5);
  lm.reset();
  remove_db(prefix);
}

TEST(Models_CachingLM, OtherModelArgsDoNotShareAnswers) {
  auto prefix = temp_prefix("identity");
  int calls = 0;
  make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel)
      ->loglikelihood({{"c", " a"}});
  Json same_speed_only =
      cache_identity("counting", {{"pretrained", "a"}, {"batch_size", "8"}, {"api_key", "k2"}});
  make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, same_speed_only)
      ->loglikelihood({{"c", " a"}});
  EXPECT_EQ(calls, 1);
  Json other = cache_identity("counting", {{"pretrained", "a"}, {"dtype", "float16"}});
  make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, other)
      ->loglikelihood({{"c", " a"}});
  EXPECT_EQ(calls, 2);
  remove_db(prefix);
}

TEST(Models_CachingLM, EachChunkIsStoredBeforeTheNext) {
  auto prefix = temp_prefix("chunks");
  std::vector<LoglikelihoodRequest> reqs;
  for (int i = 0; i < 7; ++i) reqs.push_back({"ctx", std::string(static_cast<size_t>(i + 1), 'x')});
  int calls = 0;
  {
    auto inner = std::make_unique<CountingLM>(&calls);
    inner->fail_after = 2;  // two chunks answered, the third call dies
    auto lm = make_caching_lm(std::move(inner), prefix, kModel);
    EXPECT_THROW(lm->loglikelihood(reqs), std::runtime_error);
  }
  EXPECT_EQ(calls, 4);
  auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
  auto r = lm->loglikelihood(reqs);
  EXPECT_EQ(calls, 7);  // only the 3 missing ones
  EXPECT_EQ(r[6].loglikelihood, -7.0 / 3.0);
  lm.reset();
  remove_db(prefix);
}

TEST(Models_CachingLM, SampledGenerationIsNeverCached) {
  auto prefix = temp_prefix("sample");
  int calls = 0;
  auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
  Json sampled = {{"do_sample", true}, {"until", {"\n"}}};
  Json greedy = {{"do_sample", false}, {"until", {"\n"}}};
  lm->generate_until({{"q", sampled}, {"q", greedy}});
  lm->generate_until({{"q", sampled}, {"q", greedy}});
  EXPECT_EQ(calls, 3);
  lm.reset();
  remove_db(prefix);
}

TEST(Models_CachingLM, NotADatabaseIsAClearError) {
  auto prefix = temp_prefix("notdb");
  std::ofstream(db_of(prefix)) << std::string(5000, 'g');
  std::string e = error_of(prefix);
  EXPECT_NE(e.find(db_of(prefix).string()), std::string::npos) << e;
  EXPECT_NE(e.find("not a database"), std::string::npos) << e;
  remove_db(prefix);
}

// A folder where the cache file goes: named as a folder, not called a damaged cache to delete.
TEST(Models_CachingLM, FolderInPlaceOfTheCacheIsNamed) {
  auto prefix = temp_prefix("folder");
  fs::create_directories(db_of(prefix));
  std::string e = error_of(prefix);
  EXPECT_NE(e.find(db_of(prefix).string() + " is a folder"), std::string::npos) << e;
  EXPECT_EQ(e.find("delete it"), std::string::npos) << e;
  fs::remove_all(db_of(prefix));
}

TEST(Models_CachingLM, OtherSchemaIsAClearError) {
  auto prefix = temp_prefix("schema");
  sql(db_of(prefix), "CREATE TABLE unnamed(key TEXT PRIMARY KEY, value BLOB)");
  std::string e = error_of(prefix);
  EXPECT_NE(e.find(db_of(prefix).string()), std::string::npos) << e;
  EXPECT_NE(e.find("SqliteDict"), std::string::npos) << e;
  remove_db(prefix);
  sql(db_of(prefix), "CREATE TABLE t(x)");
  EXPECT_NE(error_of(prefix).find("other tables (t)"), std::string::npos);
  remove_db(prefix);
}

TEST(Models_CachingLM, AlteredOrUndecodableRowIsAClearError) {
  auto prefix = temp_prefix("row");
  int calls = 0;
  make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel)
      ->loglikelihood({{"ctx", " a"}});
  // A digit changed in place: the pages are fine, the number is wrong.
  sql(db_of(prefix), "UPDATE responses SET value = replace(value, '6', '7')");
  std::string e = error_of(prefix);
  EXPECT_NE(e.find("checksum"), std::string::npos) << e;
  EXPECT_NE(e.find(db_of(prefix).string()), std::string::npos) << e;
  remove_db(prefix);
}

TEST(Models_CachingLM, TruncatedFileIsAClearError) {
  auto prefix = temp_prefix("trunc");
  int calls = 0;
  {
    auto lm = make_caching_lm(std::make_unique<CountingLM>(&calls), prefix, kModel);
    std::vector<LoglikelihoodRequest> reqs;
    for (int i = 0; i < 2000; ++i)
      reqs.push_back({"context " + std::to_string(i), std::string(50, 'x')});
    lm->loglikelihood(reqs);
  }
  auto size = fs::file_size(db_of(prefix));
  fs::resize_file(db_of(prefix), size / 2);
  std::string e = error_of(prefix);
  EXPECT_NE(e.find(db_of(prefix).string()), std::string::npos) << e;
  remove_db(prefix);
}

// Issue 32: a full disk under the cache advised deleting the cache ("delete it to start over"),
// which loses the answers and does not free the disk. A file size limit stands in for the full
// disk (the same short write to sqlite), in a child process so the limit stays there.
TEST(ResponseStore, FullDiskSaysSoAndDoesNotAdviseDeleting) {
  const fs::path prefix = temp_prefix("full");
  remove_db(prefix);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string msg = "no error";
    try {
      ResponseStore store(db_of(prefix));
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit lim{rlim_t{256} * 1024, rlim_t{256} * 1024};
      ::setrlimit(RLIMIT_FSIZE, &lim);
      for (int i = 0; i < 1000; ++i)
        store.put({{"k" + std::to_string(i), std::string(size_t{64} * 1024, 'x')}});
    } catch (const std::exception& e) {
      msg = e.what();
    }
    ssize_t ignored = ::write(fds[1], msg.data(), msg.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  remove_db(prefix);
  EXPECT_NE(msg.find("the disk holding it is full"), std::string::npos) << msg;
  EXPECT_NE(msg.find("give --use_cache a path on another disk"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("delete it to start over"), std::string::npos) << msg;
}

// AtomicFile: a target appears whole or not at all, and every failure names the target and the
// OS error (strerror text from CPython's os.strerror is the same libc string).
#include "lmeval/core/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("lmeval_atomic_" + std::to_string(getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(path), {}));
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(Core_AtomicFile, CommitReplacesTargetAndLeavesNoTemporary) {
  TempDir d;
  std::ofstream(d.path / "out.json") << "old";
  lmeval::write_file_atomic(d.path / "out.json", "new content");
  EXPECT_EQ(slurp(d.path / "out.json"), "new content");
  EXPECT_EQ(d.entries(), 1u);
}

TEST(Core_AtomicFile, CreatesMissingFolders) {
  TempDir d;
  lmeval::write_file_atomic(d.path / "a" / "b" / "out.txt", "x");
  EXPECT_EQ(slurp(d.path / "a" / "b" / "out.txt"), "x");
}

TEST(Core_AtomicFile, UncommittedFileLeavesNothing) {
  TempDir d;
  {
    lmeval::AtomicFile f(d.path / "out.txt");
    f.write("partial");
    EXPECT_EQ(d.entries(), 1u);  // the hidden temporary file
    EXPECT_FALSE(fs::exists(d.path / "out.txt"));
  }
  EXPECT_EQ(d.entries(), 0u);
}

TEST(Core_AtomicFile, TargetThatIsAFolderNamesPathAndError) {
  TempDir d;
  fs::create_directories(d.path / "out.json");
  try {
    lmeval::write_file_atomic(d.path / "out.json", "x");
    FAIL() << "no error";
  } catch (const lmeval::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find((d.path / "out.json").string() + ": Is a directory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(d.entries(), 1u);
}

TEST(Core_AtomicFile, FolderUnderAFileNamesTheFile) {
  TempDir d;
  std::ofstream(d.path / "plain") << "x";
  try {
    lmeval::write_file_atomic(d.path / "plain" / "sub" / "out.json", "x");
    FAIL() << "no error";
  } catch (const lmeval::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find((d.path / "plain").string() + " is a file, not a folder"),
              std::string::npos)
        << e.what();
  }
}

// Over RLIMIT_FSIZE a write fails with EFBIG (SIGXFSZ ignored): the error names the target and
// "File too large", and neither the target nor the temporary file remains. In a child process so
// the limit does not touch the test runner.
TEST(Core_AtomicFile, WriteFailureLeavesNoFile) {
  TempDir d;
  fs::path target = d.path / "big.jsonl";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
    try {
      lmeval::write_file_atomic(target, std::string(100000, 'x'));
      _exit(4);
    } catch (const lmeval::RuntimeError& e) {
      std::string m = e.what();
      _exit(m.find(target.string() + ": File too large") != std::string::npos ? 0 : 5);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "setrlimit(RLIMIT_FSIZE) is not permitted here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "4: no error raised; 5: message without path and strerror";
  EXPECT_EQ(d.entries(), 0u);
}

// Standard output and input under faults: a command whose printed output cannot be written
// (stdout on a full disk: /dev/full) exits 1 saying so instead of 0 with the output lost, and
// `tokenize` refuses an input that is a folder instead of printing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

namespace {

class StdoutFaults : public ::testing::Test {
 protected:
  lmeval::testing::CommandResult lm(const std::string& args) {
    return run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                       lmeval::testing::lmeval_binary().string() + "' " + args);
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_stdout"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(StdoutFaults, FullStdoutExitsOneNamingIt) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  for (const std::string& cmd :
       {std::string("ls tasks"),
        std::string("run --model dummy --tasks demo_story_cloze --limit 2")}) {
    auto ok = lm(cmd + " > /dev/null");
    ASSERT_EQ(ok.exit_code, 0) << cmd << ": " << ok.err;
    auto r = lm(cmd + " > /dev/full");
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("lm-eval: runtime error: cannot write standard output"), std::string::npos)
        << cmd << ": " << r.err;
  }
}

TEST_F(StdoutFaults, TokenizeRefusesAFolderAsInputAndAFullStdout) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  const std::string tok =
      "tokenize --tokenizer '" +
      (lmeval::testing::shared_dir() / "fixtures/llama/tokenizer.json").string() + "' ";
  fs::create_directories(dir_ / "afolder");
  auto r = lm(tok + "afolder");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("afolder: input is a folder"), std::string::npos) << r.err;
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  r = run_command("cd '" + dir_.string() + "' && echo hello | '" +
                  lmeval::testing::lmeval_binary().string() + "' " + tok + "> /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write standard output"), std::string::npos) << r.err;
}

// tokenize --decode reads ids as the tokenizers library's u32: a negative or larger id is refused
// naming the line (it raises OverflowError there); they were wrapped onto real tokens (4294967297
// decoded as token 1) or dropped.
TEST_F(StdoutFaults, TokenizeDecodeRefusesIdsOutOfRange) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  std::ofstream(dir_ / "ids.txt") << "1 5\n4294967297\n";
  auto decode = [&](const std::string& input) {
    return lm("tokenize --decode --tokenizer '" +
              (lmeval::testing::shared_dir() / "fixtures/llama/tokenizer.json").string() + "' " +
              input);
  };
  auto r = decode("ids.txt");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ids.txt:2: token id 4294967297 is out of range"), std::string::npos)
      << r.err;
  for (const char* bad : {"-5", "[1, -2]", "[18446744073709551615]"}) {
    std::ofstream(dir_ / "bad.txt", std::ios::trunc) << bad << "\n";
    r = decode("bad.txt");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("bad.txt:1: token id"), std::string::npos) << r.err;
  }
  // Past the vocabulary but a valid u32: decodes to nothing, as in the tokenizers library.
  std::ofstream(dir_ / "far.txt", std::ios::trunc) << "2147483648 99999\n";
  r = decode("far.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\n");
}

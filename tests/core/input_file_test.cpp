// read_input_file / require_regular_input: regular files are read whole; FIFOs, devices, folders
// and files over the limit are refused at once with a UserError naming the file, never read.
#include "lmeval/core/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "support/scratch_dir.hpp"

namespace fs = std::filesystem;
using lmeval::read_input_file;
using lmeval::require_regular_input;
using lmeval::UserError;

namespace {

// The message of the UserError `f` throws ("" when it throws none), with its file.
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.where().file + ": " + e.message() + " (expected " + e.expected() + ")";
  }
  return "";
}

class InputFile : public ::testing::Test {
 protected:
  lmeval::testing::ScratchDir scratch_{"lmeval_input_file"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(InputFile, ReadsARegularFileWholeAndThroughASymlink) {
  std::string big(200000, 'x');
  big[123456] = '\n';
  std::ofstream(dir_ / "f.txt", std::ios::binary) << big;
  EXPECT_EQ(read_input_file(dir_ / "f.txt", "file", "a file"), big);
  fs::create_symlink(dir_ / "f.txt", dir_ / "link.txt");
  EXPECT_EQ(read_input_file(dir_ / "link.txt", "file", "a file"), big);
  { std::ofstream empty(dir_ / "empty.txt"); }
  EXPECT_EQ(read_input_file(dir_ / "empty.txt", "file", "a file"), "");
}

TEST_F(InputFile, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe.yaml").c_str(), 0600), 0);
  const std::string m =
      refusal([&] { read_input_file(dir_ / "pipe.yaml", "YAML file", "a YAML file"); });
  EXPECT_NE(m.find("pipe.yaml: YAML file is a FIFO, not a regular file"), std::string::npos) << m;
  EXPECT_NE(refusal([&] { require_regular_input(dir_ / "pipe.yaml", "YAML file", "x"); }), "");
}

TEST_F(InputFile, RefusesDevicesAlsoThroughSymlinks) {
  const std::string m = refusal([] { read_input_file("/dev/zero", "data file", "a data file"); });
  EXPECT_NE(m.find("/dev/zero: data file is a character device"), std::string::npos) << m;
  fs::create_symlink("/dev/zero", dir_ / "zero.jsonl");
  const std::string l =
      refusal([&] { read_input_file(dir_ / "zero.jsonl", "data file", "a data file"); });
  EXPECT_NE(l.find("zero.jsonl: data file is a character device"), std::string::npos) << l;
  EXPECT_NE(refusal([&] { require_regular_input(dir_ / "zero.jsonl", "data file", "x"); }), "");
}

TEST_F(InputFile, RefusesFoldersMissingFilesAndFilesOverTheLimit) {
  EXPECT_NE(refusal([&] { read_input_file(dir_, "file", "a file"); }).find("file is a folder"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              read_input_file(dir_ / "nope", "file", "a file");
            }).find("nope: file does not exist"),
            std::string::npos);
  std::ofstream(dir_ / "ten", std::ios::binary) << "0123456789";
  EXPECT_EQ(read_input_file(dir_ / "ten", "file", "a file", 10), "0123456789");
  const std::string m = refusal([&] { read_input_file(dir_ / "ten", "file", "a file", 9); });
  EXPECT_NE(m.find("file is 10 bytes, over the limit of 9 bytes"), std::string::npos) << m;
  // Absence is left to the caller's own message; a regular file passes.
  EXPECT_EQ(refusal([&] { require_regular_input(dir_ / "nope", "file", "x"); }), "");
  EXPECT_EQ(refusal([&] { require_regular_input(dir_ / "ten", "file", "x"); }), "");
}

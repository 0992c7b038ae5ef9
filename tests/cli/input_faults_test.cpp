// Inputs that are not regular files (device nodes, FIFOs, links to them) wherever lm-eval reads a
// file: a task's `include:`, `data_files`, `--samples`, a task folder listed by `ls`. Each is
// refused at once with exit 2 naming the file, never read forever or blocked on (a hang here
// shows as the `timeout` exit 124).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

class InputFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.write("data/test.jsonl",
                   "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n");
    ASSERT_EQ(::mkfifo((dir_ / "data/pipe.jsonl").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((dir_ / "pipe.yaml").c_str(), 0600), 0);
    fs::create_symlink("/dev/zero", dir_ / "data/zero.jsonl");
  }
  // A multiple-choice task tasks/<name>.yaml reading `data` (relative to the scratch folder),
  // with `extra` lines first.
  void task(const std::string& name, const std::string& data, const std::string& extra = "") {
    scratch_.write("tasks/" + name + ".yaml",
                   extra + "task: " + name + "\ndataset_path: json\ndataset_kwargs:\n" +
                       "  data_files:\n    test: " + (dir_ / data).string() +
                       "\noutput_type: multiple_choice\ntest_split: test\n" +
                       "doc_to_text: \"Q: {{q}}\"\ndoc_to_choice: choices\ndoc_to_target: label\n");
  }
  lmeval::testing::CommandResult lm(const std::string& args) {
    return lmeval::testing::run_command("cd '" + dir_.string() +
                                        "' && LMEVAL_NO_INDEX_CACHE=1 timeout 60 '" +
                                        lmeval::testing::lmeval_binary().string() + "' " + args);
  }
  void refused(const std::string& args, const std::vector<std::string>& wanted) {
    auto r = lm(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    for (const auto& w : wanted)
      EXPECT_NE(r.err.find(w), std::string::npos) << args << ": no '" << w << "' in\n" << r.err;
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_input_faults"};
  const fs::path dir_ = scratch_.path();
};

const std::string kRun = "run --model dummy --include_path tasks --tasks ";

}  // namespace

TEST_F(InputFaults, IncludeOfADeviceOrFifoIsRefused) {
  task("inc_zero", "data/test.jsonl", "include: /dev/zero\n");
  refused(kRun + "inc_zero", {"/dev/zero", "is a character device, not a regular file"});
  task("inc_pipe", "data/test.jsonl", "include: " + (dir_ / "pipe.yaml").string() + "\n");
  refused(kRun + "inc_pipe", {"pipe.yaml", "is a FIFO, not a regular file"});
}

TEST_F(InputFaults, DataFilesThatAreFifosOrLinksToDevicesAreRefused) {
  task("fifo_data", "data/pipe.jsonl");
  refused(kRun + "fifo_data", {"pipe.jsonl", "is a FIFO, not a regular file"});
  task("zero_data", "data/zero.jsonl");
  refused(kRun + "zero_data", {"zero.jsonl", "is a character device, not a regular file"});
  // The same task on a regular file runs: the refusals above are about the files only.
  task("ok", "data/test.jsonl");
  EXPECT_EQ(lm(kRun + "ok").exit_code, 0);
}

TEST_F(InputFaults, SamplesFlagOnADeviceIsRefused) {
  task("ok", "data/test.jsonl");
  refused(kRun + "ok --log_samples --output_path out --samples /dev/zero",
          {"/dev/zero", "--samples", "character device"});
}

TEST_F(InputFaults, ListingAFolderWithFifosAndDeviceLinksDoesNotHang) {
  task("ok", "data/test.jsonl");
  ASSERT_EQ(::mkfifo((dir_ / "tasks/pipe.yaml").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", dir_ / "tasks/zero.yaml");
  auto r = lm("ls tasks --include_path tasks");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
}

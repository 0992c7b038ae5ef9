// Outputs under faults: an --output_path that cannot be written is refused before the model runs
// (run, merge, validate: exit 2 naming the path); a write that fails later (disk full, file size
// limit) exits 1 naming the file and the OS error and leaves no partial or empty file.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

namespace {

class OutputFaults : public ::testing::Test {
 protected:
  void TearDown() override {
    if (mounted_) ::umount2(mount_.c_str(), MNT_DETACH);
  }
  std::string bin() const { return "'" + lmeval::testing::lmeval_binary().string() + "'"; }
  std::string q(const fs::path& p) const { return "'" + p.string() + "'"; }
  // `prefix`: shell commands run first in the same shell (ulimit).
  lmeval::testing::CommandResult lm(const std::string& args, const std::string& prefix = "") {
    return run_command("cd " + q(dir_) + " && " + prefix + " LMEVAL_NO_INDEX_CACHE=1 " + bin() +
                       " " + args);
  }
  // A tmpfs of `size` bytes (options e.g. "ro") at dir_/mnt; false when mounting is not permitted.
  bool mount_tmpfs(const std::string& options) {
    mount_ = dir_ / "mnt";
    fs::create_directories(mount_);
    mounted_ = ::mount("tmpfs", mount_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    return mounted_;
  }
  // Every entry under `p`, hidden ones included (temporary files would show here).
  std::vector<std::string> files_under(const fs::path& p) const {
    std::vector<std::string> out;
    if (!fs::exists(p)) return out;
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (!e.is_directory()) out.push_back(e.path().lexically_relative(p).string());
    return out;
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_outfaults"};
  const fs::path dir_ = scratch_.path();
  fs::path mount_;
  bool mounted_ = false;
};

const std::string kRun =
    "run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --log_samples "
    "--output_path ";

}  // namespace

TEST_F(OutputFaults, RunRefusesOutputPathThatIsAFile) {
  std::ofstream(dir_ / "afile") << "x";
  auto r = lm(kRun + "afile");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--output_path: output path afile is a file"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("|demo_story_cloze"), std::string::npos) << "the model ran: " << r.out;
}

TEST_F(OutputFaults, RunRefusesOutputPathUnderAFile) {
  std::ofstream(dir_ / "afile") << "x";
  auto r = lm(kRun + "afile/out");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("output path afile/out is under afile, which is a file"), std::string::npos)
      << r.err;
}

TEST_F(OutputFaults, ValidateChecksOutputPath) {
  std::ofstream(dir_ / "afile") << "x";
  for (const std::string& p :
       {std::string("afile"), std::string("afile/out"), std::string("afile/r.json")}) {
    auto r = lm("validate --tasks demo_story_cloze --output_path " + p);
    EXPECT_EQ(r.exit_code, 2) << p << ": " << r.err;
    EXPECT_NE(r.err.find("output path " + p), std::string::npos) << r.err;
  }
  auto ok = lm("validate --tasks demo_story_cloze --output_path new/folder");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_FALSE(fs::exists(dir_ / "new")) << "validate must not create the folder";
  EXPECT_EQ(files_under(dir_), std::vector<std::string>{"afile"})
      << "the probe file must be removed";
}

TEST_F(OutputFaults, ReadOnlyMountIsRefusedByValidateRunAndMerge) {
  if (!mount_tmpfs("ro,size=64k"))
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)";
  auto v = lm("validate --tasks demo_story_cloze --output_path " + q(mount_ / "out"));
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_NE(v.err.find(mount_.string() + ": Read-only file system"), std::string::npos) << v.err;
  auto r = lm(kRun + q(mount_ / "out"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("output path " + (mount_ / "out").string() + " cannot be written"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  ASSERT_EQ(lm("run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --shard "
               "1/1 --output_path parts")
                .exit_code,
            0);
  auto m = lm("merge parts --output_path " + q(mount_ / "out"));
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_NE(m.err.find("Read-only file system"), std::string::npos) << m.err;
}

// A 32 KiB tmpfs: the samples (about 52 KB) do not fit. Exit 1 naming the file and ENOSPC's text;
// nothing left in the folder (no cut samples file, no empty results file, no temporary file).
TEST_F(OutputFaults, DiskFullExitsOneAndLeavesNoFile) {
  if (!mount_tmpfs("size=32k"))
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)";
  auto r = lm(kRun + q(mount_ / "out"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write " + (mount_ / "out/dummy/samples_demo_story_cloze_").string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("|demo_story_cloze"), std::string::npos) << "the scores are still shown";
  EXPECT_EQ(files_under(mount_), std::vector<std::string>{});
}

// The same failure through RLIMIT_FSIZE (no mount needed): EFBIG, "File too large".
TEST_F(OutputFaults, FileSizeLimitExitsOneAndLeavesNoFile) {
  // ulimit -f counts 512-byte blocks in dash, 1024 in bash: 40 blocks is 20-40 KB either way,
  // well under the demo task's samples (about 52 KB).
  auto r = lm(kRun + "out", "ulimit -f 40 &&");
  if (r.err.find("ulimit") != std::string::npos) GTEST_SKIP() << "ulimit -f refused: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write out/dummy/samples_demo_story_cloze_"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": File too large"), std::string::npos) << r.err;
  EXPECT_EQ(files_under(dir_ / "out"), std::vector<std::string>{});
}

TEST_F(OutputFaults, MergeWriteFailureExitsOne) {
  ASSERT_EQ(lm("run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze "
               "--log_samples --shard 1/1 --output_path parts")
                .exit_code,
            0);
  auto r = lm("merge parts --output_path out", "ulimit -f 40 &&");
  if (r.err.find("ulimit") != std::string::npos) GTEST_SKIP() << "ulimit -f refused: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(": File too large"), std::string::npos) << r.err;
  EXPECT_EQ(files_under(dir_ / "out"), std::vector<std::string>{});
}

// compare / analyze / report --output go through the same writer.
TEST_F(OutputFaults, AnalysisOutputsAreWrittenWholeOrNotAtAll) {
  for (const char* salt : {"a", "b"})
    ASSERT_EQ(lm("run --model dummy --model_args pretrained=dummy,salt=" + std::string(salt) +
                 " --tasks demo_story_cloze --log_samples --output_path " + salt)
                  .exit_code,
              0);
  std::ofstream(dir_ / "afile") << "x";
  for (const std::string& cmd :
       {std::string("compare"), std::string("analyze"), std::string("report")}) {
    std::string out = cmd == "report" ? "r.html" : "r.json";
    auto ok = lm(cmd + " a/dummy b/dummy --output " + out);
    ASSERT_EQ(ok.exit_code, 0) << cmd << ": " << ok.err;
    EXPECT_TRUE(fs::file_size(dir_ / out) > 0) << cmd;
    // Refused before any work (exit 2), where it used to fail at the write (exit 1).
    auto bad = lm(cmd + " a/dummy b/dummy --output afile/" + out);
    EXPECT_EQ(bad.exit_code, 2) << cmd << ": " << bad.err;
    EXPECT_NE(bad.err.find("output path afile/" + out + " is under afile, which is a file"),
              std::string::npos)
        << cmd << ": " << bad.err;
    auto full = lm(cmd + " a/dummy b/dummy --output big/" + out, "ulimit -f 1 &&");
    if (full.err.find("ulimit") != std::string::npos) continue;
    if (full.exit_code == 0) continue;  // the whole output fit in one block
    EXPECT_EQ(full.exit_code, 1) << cmd << ": " << full.err;
    EXPECT_NE(full.err.find("cannot write big/" + out + ": File too large"), std::string::npos)
        << full.err;
    EXPECT_EQ(files_under(dir_ / "big"), std::vector<std::string>{}) << cmd;
  }
}

// A --use_cache file in a read-only place is not a damaged cache: the message says read-only and
// does not advise deleting it.
TEST_F(OutputFaults, ReadOnlyCacheLocationIsNotCalledDamaged) {
  const std::string run =
      "run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --limit 4 "
      "--use_cache ";
  fs::path ro;
  if (mount_tmpfs("size=1m")) {
    ASSERT_EQ(lm(run + q(mount_ / "old")).exit_code, 0);  // a valid cache, then made read-only
    ASSERT_EQ(::mount("tmpfs", mount_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=1m"), 0);
    ro = mount_;
  } else if (::geteuid() != 0) {
    ro = dir_ / "ro";
    fs::create_directories(ro);
    ASSERT_EQ(lm(run + q(ro / "old")).exit_code, 0);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    fs::permissions(ro / "old_rank0.db", fs::perms::owner_read);
  } else {
    GTEST_SKIP()
        << "root without CAP_SYS_ADMIN: neither a read-only mount nor permissions can be tested";
  }
  for (const char* name : {"new", "old"}) {
    auto r = lm(run + q(ro / name));
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find("response cache " + (ro / name).string() + "_rank0.db"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its location is read-only"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("delete it"), std::string::npos) << r.err;
  }
  if (!mounted_) fs::permissions(ro, fs::perms::owner_all);
}

// Issue 32: --output onto a device node, FIFO, symlink or folder is refused with exit 2 before
// any work, and the thing stays what it was (the atomic write used to rename a regular file over
// it: /dev/full became a 37 KB file, with exit 0).
TEST_F(OutputFaults, AnalysisOutputOntoADeviceFifoOrSymlinkIsRefused) {
  for (const char* salt : {"a", "b"})
    ASSERT_EQ(lm("run --model dummy --model_args pretrained=dummy,salt=" + std::string(salt) +
                 " --tasks demo_story_cloze --log_samples --output_path " + salt)
                  .exit_code,
              0);
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  std::ofstream(dir_ / "real.json") << "keep";
  fs::create_symlink("real.json", dir_ / "link.json");
  fs::create_symlink("missing.json", dir_ / "dangling.json");
  fs::create_directories(dir_ / "folder.json");
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"/dev/full", "is a character device"},
      {"/dev/null", "is a character device"},
      {"fifo", "is a FIFO"},
      {"link.json", "is a symlink"},
      {"dangling.json", "is a symlink"},
      {"folder.json", "is a folder"}};
  for (const std::string& cmd : {std::string("compare"), std::string("analyze"),
                                 std::string("report"), std::string("power")}) {
    for (const auto& [target, kind] : targets) {
      auto r = lm(cmd + " a/dummy b/dummy --output " + target +
                  (cmd == "power" ? " --difference 0.05" : ""));
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << target << ": " << r.err;
      EXPECT_NE(r.err.find("--output: --output " + target + " " + kind), std::string::npos)
          << cmd << " " << target << ": " << r.err;
      EXPECT_NE(r.err.find("a regular file or a new file"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("written to"), std::string::npos) << r.err;
    }
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(lmeval::testing::read_file(dir_ / "real.json"), "keep");
  EXPECT_FALSE(fs::exists(dir_ / "missing.json"));
}

// A dangling symlink as --output_path passed validate and the pre-run probe, then failed after
// the whole model phase ("File exists"): now both refuse it, exit 2, before the model runs.
TEST_F(OutputFaults, DanglingSymlinkOutputPathIsRefusedUpFront) {
  fs::create_symlink("nowhere", dir_ / "out");
  for (const std::string& p : {std::string("out"), std::string("out/r.json")}) {
    auto v = lm("validate --tasks demo_story_cloze --output_path " + p);
    EXPECT_EQ(v.exit_code, 2) << p << ": " << v.err;
    EXPECT_NE(v.err.find("out is a symlink to a missing nowhere"), std::string::npos) << v.err;
    auto r = lm(kRun + p);
    EXPECT_EQ(r.exit_code, 2) << p << ": " << r.err;
    EXPECT_NE(r.err.find("--output_path: output path " + p +
                         ": out is a symlink to a missing "
                         "nowhere"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("|demo_story_cloze"), std::string::npos) << "the model ran: " << r.out;
  }
}

// A task name with "../" or "/" names one samples file inside the output folder, the same way
// every time (percent-encoded), never over 255 bytes.
TEST_F(OutputFaults, TaskNamesWithSlashesStayInsideTheOutputFolder) {
  const fs::path data = lmeval::testing::source_dir() / "tasks" / "demo" / "story_cloze.jsonl";
  fs::create_directories(dir_ / "tasks");
  const std::vector<std::pair<std::string, std::string>> names = {
      {"../escape", "..%2Fescape"}, {"a/b/c", "a%2Fb%2Fc"}, {std::string(300, 'n'), ""}};
  int i = 0;
  for (const auto& [name, file] : names) {
    std::ofstream(dir_ / "tasks" / ("t" + std::to_string(i++) + ".yaml"))
        << "task: \"" << name << "\"\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
        << "    test: " << data.string() << "\noutput_type: multiple_choice\ntest_split: test\n"
        << "doc_to_text: \"{{story}}\"\ndoc_to_choice: endings\ndoc_to_target: label\n"
        << "metric_list:\n  - metric: acc\n";
  }
  for (const auto& [name, file] : names) {
    auto r = lm("run --model dummy --model_args pretrained=dummy --include_path tasks --tasks '" +
                name + "' --limit 3 --log_samples --output_path out");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  std::vector<std::string> samples;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    const std::string f = e.path().filename().string();
    if (f.starts_with("samples_")) {
      samples.push_back(f);
      EXPECT_EQ(e.path().parent_path(), dir_ / "out" / "dummy") << e.path();
      EXPECT_LE(f.size(), 255u);
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "escape")) << "a samples file left the output folder";
  ASSERT_EQ(samples.size(), 3u);
  for (const auto& [name, file] : names) {
    if (file.empty()) continue;
    bool found = false;
    for (const auto& f : samples) found = found || f.starts_with("samples_" + file + "_");
    EXPECT_TRUE(found) << file;
  }
}

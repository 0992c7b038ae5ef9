// libtorch is loaded only for hf models: lm-eval does not link it (ldd), and every command that
// needs no hf model runs without it mapped (its own /proc/self/maps, read at exit by an LD_PRELOAD
// probe), while `--model hf` maps it (so the probe can see it). A missing hf plugin is exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_file;
using lmeval::testing::run_command;
using lmeval::testing::source_dir;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

class LazyTorch : public ::testing::Test {
 protected:
  // Runs lm-eval with the probe; returns the torch mappings it saw ("maps-probe-ran" last).
  std::string mapped_after(const std::string& args, const std::string& env = "",
                           int expected_exit = 0) {
    const fs::path out = dir_ / "maps.txt";
    fs::remove(out);
    auto r = run_command(
        "cd " + quoted(dir_) + " && " + env + " LD_PRELOAD=" + quoted(LMEVAL_MAPS_PROBE) +
        " LMEVAL_MAPS_PROBE_OUT=" + quoted(out) + " " + quoted(lmeval_binary()) + " " + args);
    EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.err;
    std::string maps = fs::exists(out) ? read_file(out) : "";
    EXPECT_NE(maps.find("maps-probe-ran"), std::string::npos)
        << "the probe did not run for: " << args;
    return maps;
  }
  void expect_no_torch(const std::string& args, const std::string& env = "",
                       int expected_exit = 0) {
    std::string maps = mapped_after(args, env, expected_exit);
    EXPECT_EQ(maps.find("libtorch"), std::string::npos) << args << " mapped libtorch:\n" << maps;
    EXPECT_EQ(maps.find("libc10"), std::string::npos) << args << " mapped libc10:\n" << maps;
  }
  bool has_hf() {
    return run_command(quoted(lmeval_binary()) + " ls models").out.find("|hf ") !=
           std::string::npos;
  }

  lmeval::testing::ScratchDir scratch_{"lmeval_lazy_torch"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(LazyTorch, BinaryDoesNotLinkLibtorch) {
  auto r = run_command("ldd " + quoted(lmeval_binary()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libc.so"), std::string::npos) << r.out;  // ldd did list the libraries
  EXPECT_EQ(r.out.find("libtorch"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libc10"), std::string::npos) << r.out;
}

TEST_F(LazyTorch, CommandsWithoutHfNeverMapLibtorch) {
  const std::string demo = " --tasks demo_story_cloze --limit 6 --log_samples";
  const std::string stories = quoted(source_dir() / "models/stories260K");
  expect_no_torch("-h");
  expect_no_torch("run -h");
  expect_no_torch("ls tasks");
  expect_no_torch("ls models");
  expect_no_torch("validate --model dummy --tasks demo_story_cloze");
  expect_no_torch("validate --model hf --model_args pretrained=x --tasks demo_story_cloze");
  expect_no_torch("run --model dummy" + demo + " --output_path a");
  expect_no_torch("run --model dummy --model_args pretrained=other" + demo + " --output_path b");
  expect_no_torch("run --model dummy" + demo + " --shard 1/2 --output_path parts");
  expect_no_torch("run --model dummy" + demo + " --shard 2/2 --output_path parts");
  expect_no_torch("merge parts/shard_1of2.json parts/shard_2of2.json --output_path merged");
  expect_no_torch("compare a b");
  expect_no_torch("analyze a b");
  expect_no_torch("report a b --output r.html");
  expect_no_torch("tokenize --tokenizer " + stories + " --json < /dev/null");
  // An API model (nothing listens on port 1: the run fails after building and using the model).
  expect_no_torch(
      "run --model local-completions --model_args "
      "model=m,base_url=http://127.0.0.1:1/v1/completions,"
      "tokenizer=" +
          stories + ",max_retries=1,timeout=2 --tasks demo_story_cloze --limit 2",
      "", 1);
}

TEST_F(LazyTorch, HfModelMapsLibtorch) {
  if (!has_hf()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  std::string maps = mapped_after("run --model hf --device cpu --model_args pretrained=" +
                                  quoted(source_dir() / "models/stories260K") +
                                  " --tasks demo_story_cloze --limit 2");
  EXPECT_NE(maps.find("libtorch"), std::string::npos) << maps;
}

TEST_F(LazyTorch, MissingPluginIsExit2SayingHowToBuildIt) {
  if (!has_hf()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  const std::string run =
      " " + quoted(lmeval_binary()) +
      " run --model hf --model_args pretrained=" + quoted(source_dir() / "models/stories260K") +
      " --tasks demo_story_cloze --limit 2";
  const std::string empty = "LMEVAL_PLUGIN_DIR=" + quoted(dir_);
  auto cpu = run_command(empty + run + " --device cpu");
  EXPECT_EQ(cpu.exit_code, 2) << cpu.err;
  EXPECT_NE(cpu.err.find("liblmeval_hf_cpu.so"), std::string::npos) << cpu.err;
  EXPECT_NE(cpu.err.find("scripts/setup.sh"), std::string::npos) << cpu.err;
  // A file that is not a usable plugin: exit 2 with the loader's reason.
  std::ofstream(dir_ / "liblmeval_hf_cpu.so") << "not an ELF file";
  auto broken = run_command(empty + run + " --device cpu");
  EXPECT_EQ(broken.exit_code, 2) << broken.err;
  EXPECT_NE(broken.err.find("could not be loaded"), std::string::npos) << broken.err;
  // --device cuda needs the CUDA plugin, the CPU one being there or not.
  if (fs::exists(lmeval_binary().parent_path() / "liblmeval_hf_cuda.so"))
    GTEST_SKIP() << "a CUDA plugin is built";
  for (const std::string device : {"cuda", "cuda:1"}) {
    auto cuda = run_command(run + " --device " + device);
    EXPECT_EQ(cuda.exit_code, 2) << cuda.err;
    EXPECT_NE(cuda.err.find("liblmeval_hf_cuda.so"), std::string::npos) << cuda.err;
    EXPECT_NE(cuda.err.find("scripts/setup.sh --cuda"), std::string::npos) << cuda.err;
  }
}

TEST_F(LazyTorch, InstalledLayoutFindsThePluginInLibLmEval) {
  if (!has_hf()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  // What `cmake --install build --prefix P` lays out: P/bin/lm-eval, P/lib/lm-eval/<plugin>,
  // P/share/lm-eval/tasks (here a link to the repository's).
  fs::create_directories(dir_ / "bin");
  fs::create_directories(dir_ / "lib/lm-eval");
  fs::create_directories(dir_ / "share/lm-eval");
  fs::create_directory_symlink(source_dir() / "tasks", dir_ / "share/lm-eval/tasks");
  fs::copy_file(lmeval_binary(), dir_ / "bin/lm-eval");
  fs::copy_file(lmeval_binary().parent_path() / "liblmeval_hf_cpu.so",
                dir_ / "lib/lm-eval/liblmeval_hf_cpu.so");
  auto r = run_command("cd " + quoted(dir_) +
                       " && bin/lm-eval run --model hf --device cpu --model_args pretrained=" +
                       quoted(source_dir() / "models/stories260K") +
                       " --tasks demo_story_cloze --limit 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("demo_story_cloze"), std::string::npos) << r.out;
}

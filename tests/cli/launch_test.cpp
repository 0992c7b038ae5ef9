// Runs started by torchrun or srun: with RANK/WORLD_SIZE/LOCAL_RANK (or SLURM_PROCID/SLURM_NTASKS/
// SLURM_LOCALID) set, each of the CPU processes answers its shard and rank 0 merges once every part
// is on the output path; the results and samples equal those of one plain run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_file;
using lmeval::testing::results_without_timings;
using lmeval::testing::run_command;
using lmeval::testing::samples_of;

namespace {

const char* kArgs =
    " run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --log_samples";

class Launch : public ::testing::Test {
 protected:
  std::string bin() const { return "'" + lmeval_binary().string() + "'"; }

  // Starts one process per entry of `envs` at once (rank 0 first, the others a moment later so
  // that it has to wait); returns each one's exit code and stderr.
  std::vector<std::pair<int, std::string>> launch(const std::vector<std::string>& envs,
                                                  const std::string& out,
                                                  const std::string& extra = "") {
    std::string script;
    for (size_t r = 0; r < envs.size(); ++r)
      script += "(" + std::string(r ? "sleep 1; " : "") + "env " + envs[r] + " " + bin() + kArgs +
                extra + " --output_path '" + (dir_ / out).string() + "' > '" +
                (dir_ / ("o" + std::to_string(r))).string() + "' 2> '" +
                (dir_ / ("e" + std::to_string(r))).string() + "'; echo $? > '" +
                (dir_ / ("rc" + std::to_string(r))).string() + "') & ";
    auto all = run_command(script + "wait");
    EXPECT_EQ(all.exit_code, 0) << all.err;
    std::vector<std::pair<int, std::string>> rc;
    for (size_t r = 0; r < envs.size(); ++r)
      rc.emplace_back(std::stoi(read_file(dir_ / ("rc" + std::to_string(r)))),
                      read_file(dir_ / ("e" + std::to_string(r))));
    return rc;
  }
  void expect_equals_plain_run(const std::string& out) {
    auto whole = run_command(bin() + kArgs + " --output_path '" + (dir_ / "whole").string() + "'");
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    EXPECT_EQ(results_without_timings(dir_ / out), results_without_timings(dir_ / "whole"));
    EXPECT_FALSE(samples_of(dir_ / "whole", "demo_story_cloze").empty());
    EXPECT_EQ(samples_of(dir_ / out, "demo_story_cloze"),
              samples_of(dir_ / "whole", "demo_story_cloze"));
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_launch"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(Launch, TorchrunThreeProcessesMergeToOnePlainRun) {
  auto rc = launch({"RANK=0 WORLD_SIZE=3 LOCAL_RANK=0 TORCHELASTIC_RUN_ID=job1",
                    "RANK=1 WORLD_SIZE=3 LOCAL_RANK=1 TORCHELASTIC_RUN_ID=job1",
                    "RANK=2 WORLD_SIZE=3 LOCAL_RANK=0 TORCHELASTIC_RUN_ID=job1"},
                   "out");
  for (const auto& [code, err] : rc) EXPECT_EQ(code, 0) << err;
  for (int i = 1; i <= 3; ++i)
    EXPECT_TRUE(fs::exists(dir_ / "out" / ("shard_" + std::to_string(i) + "of3.json")));
  EXPECT_NE(read_file(dir_ / "o0").find("demo_story_cloze"),
            std::string::npos);  // rank 0 prints the table
  EXPECT_EQ(read_file(dir_ / "o1").find("|demo_story_cloze"), std::string::npos);
  expect_equals_plain_run("out");
}

TEST_F(Launch, SlurmTwoTasksMergeToOnePlainRun) {
  auto rc =
      launch({"SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_JOB_ID=77 SLURM_STEP_ID=0",
              "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=1 SLURM_JOB_ID=77 SLURM_STEP_ID=0"},
             "out");
  for (const auto& [code, err] : rc) EXPECT_EQ(code, 0) << err;
  expect_equals_plain_run("out");
}

TEST_F(Launch, EachProcessTakesCudaOfItsLocalRank) {
  // The dummy model ignores the device; each part records the one its process was given.
  auto rc = launch({"RANK=0 WORLD_SIZE=2 LOCAL_RANK=0", "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1"}, "out",
                   " --device cuda");
  for (const auto& [code, err] : rc) EXPECT_EQ(code, 0) << err;
  for (int i = 1; i <= 2; ++i) {
    auto part = nlohmann::json::parse(
        read_file(dir_ / "out" / ("shard_" + std::to_string(i) + "of2.json")));
    EXPECT_EQ(part["config"]["device"], "cuda:" + std::to_string(i - 1));
  }
  // srun --gpus-per-task 1: each task sees one GPU, its own, as cuda:0.
  rc = launch({"RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 CUDA_VISIBLE_DEVICES=5",
               "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 CUDA_VISIBLE_DEVICES=6"},
              "narrowed", " --device cuda");
  for (const auto& [code, err] : rc) EXPECT_EQ(code, 0) << err;
  EXPECT_EQ(
      nlohmann::json::parse(read_file(dir_ / "narrowed" / "shard_2of2.json"))["config"]["device"],
      "cuda:0");
  // A CPU device is left alone.
  rc = launch({"RANK=0 WORLD_SIZE=2 LOCAL_RANK=0", "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1"}, "cpu",
              " --device cpu");
  for (const auto& [code, err] : rc) EXPECT_EQ(code, 0) << err;
  auto part = nlohmann::json::parse(read_file(dir_ / "cpu" / "shard_2of2.json"));
  EXPECT_EQ(part["config"]["device"], "cpu");
}

TEST_F(Launch, RankZeroGivesUpAfterTheTimeoutNamingTheMissingParts) {
  // Part 2 of an earlier launch is there: it is not this run's, so rank 0 still waits for it.
  auto first = launch(
      {"RANK=0 WORLD_SIZE=2 TORCHELASTIC_RUN_ID=a", "RANK=1 WORLD_SIZE=2 TORCHELASTIC_RUN_ID=a"},
      "out");
  for (const auto& [code, err] : first) ASSERT_EQ(code, 0) << err;
  auto rc = launch({"RANK=0 WORLD_SIZE=2 TORCHELASTIC_RUN_ID=b LMEVAL_LAUNCH_TIMEOUT=1"}, "out");
  EXPECT_EQ(rc[0].first, 1) << rc[0].second;
  EXPECT_NE(rc[0].second.find("part(s) 2"), std::string::npos) << rc[0].second;
  EXPECT_NE(rc[0].second.find("LMEVAL_LAUNCH_TIMEOUT"), std::string::npos) << rc[0].second;
  EXPECT_NE(rc[0].second.find("lm-eval merge"), std::string::npos) << rc[0].second;
}

TEST_F(Launch, NeedsAnOutputPathAndSaneVariables) {
  auto r = run_command("RANK=0 WORLD_SIZE=2 " + bin() + kArgs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--output_path"), std::string::npos) << r.err;
  r = run_command("RANK=2 WORLD_SIZE=2 " + bin() + kArgs + " --output_path '" + dir_.string() +
                  "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("RANK=2"), std::string::npos) << r.err;
  r = run_command("RANK=x WORLD_SIZE=2 " + bin() + kArgs + " --output_path '" + dir_.string() +
                  "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // WORLD_SIZE=1 is a plain run.
  r = run_command("RANK=0 WORLD_SIZE=1 " + bin() + kArgs + " --output_path '" +
                  (dir_ / "one").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "one" / "shard_1of1.json"));
}

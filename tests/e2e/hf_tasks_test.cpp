// Every task whose data exists in ../shared/hf_data runs end to end with the real `hf` backend on
// the embedded stories260K model (issue 6, point 6), and the results carry the reference's keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "support/test_support.hpp"
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

bool has_hf_backend() {
  auto r = lmeval::testing::run_command("'" + lmeval::testing::lmeval_binary().string() + "' ls models");
  return r.exit_code == 0 && r.out.find("|hf ") != std::string::npos;
}

class HfTaskRun : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(HfTaskRun, RunsOnStories260K) {
  LMEVAL_REQUIRE_SHARED("hf_data");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  const std::string task = GetParam();
  fs::path out = fs::temp_directory_path() / ("lmeval_hf_task_" + std::to_string(getpid()) + "_" + task);
  fs::remove_all(out);
  std::string extra = task == "leaderboard_ifeval" ? " --gen_kwargs max_gen_toks=64" : "";
  auto r = lmeval::testing::run_command(
      "'" + lmeval::testing::lmeval_binary().string() + "' run --model hf --model_args pretrained='" +
      (lmeval::testing::source_dir() / "models/stories260K").string() + "' --device cpu --tasks " + task +
      " --limit 3 --data_dir '" + (lmeval::testing::shared_dir() / "hf_data").string() + "' --output_path '" +
      out.string() + "'" + extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::path results;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().extension() == ".json") results = e.path();
  ASSERT_FALSE(results.empty());
  Json j = Json::parse(lmeval::testing::read_file(results));
  for (const char* key : {"results", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better",
                          "n-samples", "config", "model_name", "total_evaluation_time_seconds",
                          "tokenizer_bos_token", "max_length"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["n-samples"][task]["effective"], 3);
  EXPECT_EQ(j["config"]["model_dtype"], "torch.float32");
  fs::remove_all(out);
}

// MATH-hard and MuSR, whose data is absent here, on the stand-in rows of tests/fixtures (the same
// rows the reference ran on for tests/fixtures/standin_goldens).
TEST(HfTaskRunStandin, MathHardAndMusrRunOnStories260K) {
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  for (const std::string task : {"leaderboard_math_hard", "leaderboard_musr"}) {
    fs::path out = fs::temp_directory_path() / ("lmeval_hf_standin_" + std::to_string(getpid()) + "_" + task);
    fs::remove_all(out);
    auto r = lmeval::testing::run_command(
        "'" + lmeval::testing::lmeval_binary().string() + "' run --model hf --model_args pretrained='" +
        (lmeval::testing::source_dir() / "models/stories260K").string() + "' --device cpu --tasks " + task +
        " --limit 2 --gen_kwargs max_gen_toks=32 --data_dir '" +
        (lmeval::testing::source_dir() / "tests/fixtures/standin_data").string() + "' --output_path '" + out.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << task << "\n" << r.err;
    fs::path results;
    for (const auto& e : fs::recursive_directory_iterator(out))
      if (e.path().extension() == ".json") results = e.path();
    ASSERT_FALSE(results.empty()) << task;
    Json j = Json::parse(lmeval::testing::read_file(results));
    EXPECT_TRUE(j["results"].contains(task)) << task;
    EXPECT_EQ(j["config"]["model_dtype"], "torch.float32");
    fs::remove_all(out);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tasks, HfTaskRun,
    ::testing::Values("arc_easy", "mmlu_anatomy", "gsm8k", "hellaswag", "piqa", "winogrande", "boolq",
                      "lambada_openai", "truthfulqa_mc2", "wikitext", "openbookqa", "logiqa", "wsc",
                      "leaderboard_ifeval", "leaderboard_bbh_navigate", "leaderboard_mmlu_pro",
                      "leaderboard_gpqa_main", "gsm8k_cot"));

// The progress bar: one per request type on stderr with rate, ETA and (hf) tokens/s when asked
// for with LMEVAL_PROGRESS=1; nothing when LMEVAL_PROGRESS=0 (as for a log file).
TEST(Progress, BarWithTokensPerSecondAndEta) {
  // The demo task ships in the repository (3 choices per document).
  const std::string base = "'" + lmeval::testing::lmeval_binary().string() + "' run --tasks demo_story_cloze --limit 5";
  auto dummy = lmeval::testing::run_command("LMEVAL_PROGRESS=1 " + base + " --model dummy");
  ASSERT_EQ(dummy.exit_code, 0) << dummy.err;
  EXPECT_NE(dummy.err.find("loglikelihood ["), std::string::npos) << dummy.err;
  EXPECT_NE(dummy.err.find("15/15 ("), std::string::npos) << dummy.err;
  EXPECT_NE(dummy.err.find("ETA"), std::string::npos) << dummy.err;
  EXPECT_EQ(dummy.err.find("tok/s"), std::string::npos) << "the dummy model counts no tokens";
  auto quiet = lmeval::testing::run_command("LMEVAL_PROGRESS=0 " + base + " --model dummy");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("loglikelihood ["), std::string::npos) << quiet.err;
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  auto hf = lmeval::testing::run_command("LMEVAL_PROGRESS=1 " + base + " --model hf --device cpu --model_args pretrained='" +
                                         (lmeval::testing::source_dir() / "models/stories260K").string() + "'");
  ASSERT_EQ(hf.exit_code, 0) << hf.err;
  EXPECT_NE(hf.err.find("tok/s"), std::string::npos) << hf.err;
  EXPECT_NE(hf.err.find("15/15 ("), std::string::npos) << hf.err;
}

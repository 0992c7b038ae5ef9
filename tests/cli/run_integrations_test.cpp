// `lm-eval run` with --hf_hub_log_args (a loopback Hub) and --wandb_args (a stand-in wandb
// package on PYTHONPATH): what reaches them, the early exits, and HF_TOKEN kept out of the
// logs, the results and the samples.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/fake_hub_writer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::run_command;

namespace {

const char* kToken = "hf_cliSECRET987";

class RunIntegrations : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.write("data/test.jsonl",
                   "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
                   "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
    scratch_.write("tasks/t1.yaml",
                   "task: t1\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                       (dir_ / "data/test.jsonl").string() +
                       "\noutput_type: multiple_choice\ntest_split: test\n"
                       "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\n"
                       "doc_to_target: label\nmetric_list:\n  - metric: acc\n");
  }
  lmeval::testing::CommandResult lm(const std::string& env, const std::string& args) {
    return run_command("cd '" + dir_.string() + "' && " + env + " LMEVAL_NO_INDEX_CACHE=1 '" +
                       lmeval::testing::lmeval_binary().string() +
                       "' run --model dummy --tasks t1 --include_path tasks " + args);
  }
  std::vector<Json> wandb_calls() { return lmeval::testing::read_jsonl(dir_ / "wandb.jsonl"); }
  static std::string fixture(const std::string& name) {
    return (lmeval::testing::source_dir() / "tests/fixtures" / name).string();
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_integrations"};
  const fs::path dir_ = scratch_.path();
};

std::string all_files_under(const fs::path& dir) {
  std::string s;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) s += lmeval::testing::read_file(e.path());
  return s;
}

}  // namespace

TEST_F(RunIntegrations, HubPushUploadsTheRunAndKeepsTheTokenSecret) {
  lmeval::testing::FakeHubWriter hub(kToken);
  auto r = lm(std::string("HF_ENDPOINT=") + hub.endpoint() + " HF_TOKEN=" + kToken +
                  " HF_HUB_CACHE=" + (dir_ / "cache").string(),
              "--model_args pretrained=org/m --output_path out --log_samples --hf_hub_log_args "
              "push_results_to_hub=True,push_samples_to_hub=True,public_repo=True,"
              "details_repo_name=d,results_repo_name=r");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results_repo = hub.files("tester/r");
  auto details_repo = hub.files("tester/d");
  ASSERT_EQ(results_repo.size(), 1u);
  EXPECT_EQ(results_repo.begin()->first.rfind("org/m/results_", 0), 0u)
      << results_repo.begin()->first;
  bool samples = false;
  for (const auto& [path, content] : details_repo)
    if (path.rfind("org__m/samples_t1_", 0) == 0) {
      samples = true;
      EXPECT_EQ(content, lmeval::testing::read_file(dir_ / "out" / path.substr(0, path.find('/')) /
                                                    path.substr(path.find('/') + 1)));
    }
  EXPECT_TRUE(samples);
  EXPECT_TRUE(details_repo.count("README.md"));
  EXPECT_EQ((r.out + r.err).find(kToken), std::string::npos);
  EXPECT_EQ(all_files_under(dir_ / "out").find(kToken), std::string::npos);
}

TEST_F(RunIntegrations, HubPushFailureIsAWarningAndTheRunSucceeds) {
  lmeval::testing::FakeHubWriter hub(kToken);
  hub.fail("/commit/", 403);  // not retried (a 5xx would be, for half a minute)
  auto r = lm(std::string("HF_ENDPOINT=") + hub.endpoint() + " HF_TOKEN=" + kToken +
                  " HF_HUB_CACHE=" + (dir_ / "cache").string(),
              "--output_path out --hf_hub_log_args hub_results_org=o,push_results_to_hub=True");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Could not push the aggregated results to o/lm-eval-results-private"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("HTTP 403"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find(kToken), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("|t1"), std::string::npos);  // the scores are still shown
}

TEST_F(RunIntegrations, HubPushNeedsATokenAndAValidKeyBeforeTheModel) {
  auto r = lm("HF_TOKEN=", "--output_path out --hf_hub_log_args push_results_to_hub=True");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("HF_TOKEN"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  auto r2 = lm(std::string("HF_TOKEN=") + kToken, "--hf_hub_log_args push_result_to_hub=True");
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
  EXPECT_NE(r2.err.find("unknown key 'push_result_to_hub'"), std::string::npos) << r2.err;
  EXPECT_EQ(r2.err.find(kToken), std::string::npos);
}

TEST_F(RunIntegrations, WandbGetsConfigMetricsTablesAndArtifacts) {
  auto r = lm(
      "PYTHONPATH=" + fixture("fake_wandb") + " FAKE_WANDB_LOG=" + (dir_ / "wandb.jsonl").string(),
      "--output_path out --log_samples --wandb_args project=p,name=n,step=3 "
      "--wandb_config_args lr=0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto calls = wandb_calls();
  ASSERT_GE(calls.size(), 8u) << r.err;
  EXPECT_EQ(calls[0]["call"], "init");
  EXPECT_EQ(calls[0]["kwargs"], (Json{{"project", "p"}, {"name", "n"}}));  // step is WandbLogger's
  EXPECT_EQ(calls[1]["call"], "config.update");
  EXPECT_EQ(calls[1]["value"], (Json{{"lr", 0.5}}));
  EXPECT_EQ(calls[2]["call"], "config.update");
  EXPECT_TRUE(calls[2]["value"].contains("task_configs"));
  EXPECT_TRUE(calls[2]["value"].contains("cli_configs"));
  EXPECT_EQ(calls[2]["allow_val_change"], true);  // a step was given

  fs::path results_file;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "out"))
    if (e.path().filename().string().rfind("results_", 0) == 0) results_file = e.path();
  Json results = Json::parse(lmeval::testing::read_file(results_file));
  bool metrics = false, table = false, samples_table = false, results_artifact = false,
       samples_artifact = false;
  for (const auto& c : calls) {
    if (c["call"] == "log" && c["data"].contains("t1/acc")) {
      metrics = true;
      EXPECT_EQ(c["data"]["t1/acc"], results["results"]["t1"]["acc,none"]);
      EXPECT_EQ(c["step"], 3);
    }
    if (c["call"] == "log" && c["data"].contains("evaluation/eval_results")) {
      table = true;
      const Json& t = c["data"]["evaluation/eval_results"]["table"];
      EXPECT_EQ(t["columns"],
                (Json{"Tasks", "Version", "Filter", "num_fewshot", "Metric", "Value", "Stderr"}));
      bool acc_row = false;  // one row per score key that is not a stderr or the alias
      for (const auto& row : t["data"])
        acc_row = acc_row || (row[0] == "t1" && row[4] == "acc" && row[2] == "none");
      EXPECT_TRUE(acc_row) << t.dump();
    }
    if (c["call"] == "log" && c["data"].contains("t1_eval_results")) {
      samples_table = true;
      const Json& t = c["data"]["t1_eval_results"]["table"];
      EXPECT_EQ(t["columns"], (Json{"id", "data", "choices", "input_len", "labels", "output_type",
                                    "raw_predictions", "filtered_predictions", "acc"}));
      ASSERT_EQ(t["data"].size(), 2u);
      EXPECT_EQ(t["data"][0][1], "Q: 1+1?\nA:");
      EXPECT_EQ(t["data"][0][2], "0.  1\n1.  2");
    }
    if (c["call"] == "log_artifact" && c["name"] == "results") {
      results_artifact = true;
      EXPECT_EQ(c["type"], "eval_results");
      EXPECT_EQ(Json::parse(c["files"]["results.json"].get<std::string>())["results"],
                results["results"]);
    }
    if (c["call"] == "log_artifact" && c["name"] == "t1") {
      samples_artifact = true;
      EXPECT_EQ(c["type"], "samples_by_task");
      EXPECT_EQ(Json::parse(c["files"]["t1_eval_samples.json"].get<std::string>()).size(), 2u);
    }
  }
  EXPECT_TRUE(metrics && table && samples_table && results_artifact && samples_artifact) << r.err;
  EXPECT_EQ(calls.back()["call"], "finish");
}

TEST_F(RunIntegrations, WandbAbsentExitsTwoBeforeTheModel) {
  auto r = lm("PYTHONPATH=" + fixture("broken_wandb"), "--output_path out --wandb_args project=p");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("pip install wandb"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

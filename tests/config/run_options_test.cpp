// The run flag table against its readers: docs/cli.md's flag list, `lm-eval run --help`, the
// --config keys, the shard file and the results' config block.
#include "lmeval/config/run_options.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/yaml_loader.hpp"
#include "support/test_support.hpp"

using namespace lmeval;

namespace {

// The rows of docs/cli.md between its run-flags markers.
std::vector<std::string> documented_rows() {
  std::istringstream in(
      lmeval::testing::read_file(lmeval::testing::source_dir() / "docs" / "cli.md"));
  std::vector<std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<!-- run-flags:begin") != std::string::npos)
      inside = true;
    else if (line.find("<!-- run-flags:end") != std::string::npos)
      inside = false;
    else if (inside && line.rfind("| `", 0) == 0)
      rows.push_back(line);
  }
  return rows;
}

}  // namespace

TEST(Config_RunOptions, DocsFlagListIsTheTable) {
  std::vector<std::string> want = run_option_doc_rows();
  std::vector<std::string> got = documented_rows();
  std::string expected;
  for (const auto& r : want) expected += r + "\n";
  ASSERT_EQ(got.size(), want.size()) << "docs/cli.md's run flag list should read:\n" << expected;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "docs/cli.md's run flag list should read:\n" << expected;
}

TEST(Config_RunOptions, RunHelpShowsEveryFlag) {
  auto r = lmeval::testing::run_command(lmeval::testing::lmeval_binary().string() + " run --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& o : run_options())
    for (const auto& f : o.flags) {
      // CLI11 prints "-t,--tasks": a flag is preceded by a space or a comma.
      bool found =
          r.out.find(" " + f) != std::string::npos || r.out.find("," + f) != std::string::npos;
      EXPECT_TRUE(found) << f << " missing from `lm-eval run --help`:\n" << r.out;
    }
}

TEST(Config_RunOptions, KeysAndFlagsAreUnique) {
  std::set<std::string> keys, flags;
  for (const auto& o : run_options()) {
    EXPECT_TRUE(keys.insert(o.key).second) << o.key;
    for (const auto& f : o.flags) EXPECT_TRUE(flags.insert(f).second) << f;
    EXPECT_TRUE(o.from_cli || o.flags.empty()) << o.key << ": a flag without a setter";
    EXPECT_EQ(o.results_rank > 0, static_cast<bool>(o.to_results)) << o.key;
    EXPECT_EQ(static_cast<bool>(o.to_json), static_cast<bool>(o.from_json)) << o.key;
  }
}

// The reference's EvaluatorConfig field names (lm_eval/config/evaluate_config.py, 0.4.13) plus
// lm-eval's own keys: the --config keys the table accepts.
TEST(Config_RunOptions, ConfigKeysAreTheReferencesFieldsAndOurs) {
  std::set<std::string> want = {
      "config", "model", "model_args", "tasks", "num_fewshot", "batch_size", "max_batch_size",
      "device", "limit", "samples", "use_cache", "cache_requests", "check_integrity", "write_out",
      "log_samples", "output_path", "predict_only", "system_instruction", "apply_chat_template",
      "fewshot_as_multiturn", "show_config", "include_path", "gen_kwargs", "verbosity",
      "wandb_args", "wandb_config_args", "trackio_args", "hf_hub_log_args", "seed",
      "trust_remote_code", "confirm_run_unsafe_code", "metadata",
      // lm-eval's
      "bootstrap_iters", "data_dir", "show_ci", "continuous_metrics", "fewshot_seeds",
      "log_repeat_scores"};
  const auto& keys = eval_config_keys();
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), want);
}

// A --config YAML sets what the flags set; every recorded field survives the shard file.
TEST(Config_RunOptions, YamlValuesReachTheShardFile) {
  auto y = parse_yaml(
      "model: dummy\ntasks: [a, b]\nlimit: 3\nnum_fewshot: 2\nbatch_size: auto:4\n"
      "max_batch_size: 8\ndevice: cpu\nseed: 7\nbootstrap_iters: 10\ngen_kwargs: temperature=0\n"
      "show_ci: true\nfewshot_seeds: 1,2\n",
      "eval.yaml");
  EvalConfig cfg;
  apply_config_yaml(y, cfg);
  Json j = eval_config_to_json(cfg);
  EXPECT_EQ(j["model"], "dummy");
  EXPECT_EQ(j["tasks"], Json::array({"a", "b"}));
  EXPECT_EQ(j["limit"], 3.0);
  EXPECT_EQ(j["num_fewshot"], 2);
  EXPECT_EQ(j["batch_size"], "auto:4");
  EXPECT_EQ(j["max_batch_size"], 8);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["seed"], Json::array({7, 7, 7, 7}));
  EXPECT_EQ(j["bootstrap_iters"], 10);
  EXPECT_EQ(j["gen_kwargs"], Json({{"temperature", 0}}));
  EXPECT_EQ(j["show_ci"], true);
  EXPECT_EQ(j["fewshot_seeds"], Json::array({1, 2}));
  EXPECT_EQ(eval_config_to_json(eval_config_from_json(j)), j);
}

// The reference's results `config` block (evaluator.simple_evaluate): these keys in this order,
// the model's own facts after model_args.
TEST(Config_RunOptions, ResultsConfigBlockInTheReferencesOrder) {
  EvalConfig cfg;
  cfg.model = "dummy";
  cfg.limit = 5;
  cfg.seed = {0, 1234, std::nullopt, 1234};
  Json block = results_config(cfg, Json{{"model_num_parameters", 7}}, Json::array({1}));
  std::vector<std::string> keys;
  for (auto it = block.begin(); it != block.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"model", "model_args", "model_num_parameters",
                                            "batch_size", "batch_sizes", "device", "use_cache",
                                            "limit", "bootstrap_iters", "gen_kwargs", "random_seed",
                                            "numpy_seed", "torch_seed", "fewshot_seed"}));
  EXPECT_EQ(block["limit"], 5.0);
  EXPECT_TRUE(block["use_cache"].is_null());
  EXPECT_TRUE(block["torch_seed"].is_null());
  EXPECT_EQ(block["fewshot_seed"], 1234);
}

// The range checks live on the table's entries: each names its own flag, and finalize runs them
// for flags and --config values alike.
TEST(Config_RunOptions, RangeChecksBelongToTheirEntries) {
  for (const char* key : {"limit", "num_fewshot", "max_batch_size", "bootstrap_iters", "batch_size",
                          "verbosity", "include_path"}) {
    const RunOption* o = find_run_option(key);
    ASSERT_NE(o, nullptr) << key;
    EXPECT_TRUE(static_cast<bool>(o->check)) << key;
  }
  EvalConfig cfg;
  cfg.num_fewshot = -1;
  try {
    find_run_option("num_fewshot")->check(cfg);
    ADD_FAILURE() << "a negative num_fewshot passed its check";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--num_fewshot"), std::string::npos) << e.what();
  }
  EvalConfig fine;
  for (const auto& o : run_options())
    if (o.check) EXPECT_NO_THROW(o.check(fine)) << o.key;
}

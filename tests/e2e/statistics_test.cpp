// The `statistics` section and --show_ci through the binary: intervals, clustered stderr and MDE
// are wired to the right items (recomputed here from the logged samples), `results` keeps the
// reference's keys only, and the default table is untouched.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "lmeval/stats/clustered.hpp"
#include "lmeval/stats/intervals.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

struct BoolqRun {
  lmeval::testing::CommandResult cmd;
  Json results;
  std::vector<Json> samples;
};

BoolqRun run_boolq(const std::string& name, const std::string& extra) {
  fs::path out =
      fs::temp_directory_path() / ("lmeval_statistics_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  BoolqRun r;
  r.cmd = lmeval::testing::run_command(
      "'" + lmeval::testing::lmeval_binary().string() +
      "' run --model dummy --tasks boolq --log_samples --data_dir '" +
      (lmeval::testing::shared_dir() / "hf_data").string() + "' --output_path '" + out.string() +
      "' " + extra + " 2>/dev/null");
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("results_", 0) == 0) r.results = Json::parse(lmeval::testing::read_file(e.path()));
    if (f.rfind("samples_boolq", 0) == 0) {
      std::istringstream in(lmeval::testing::read_file(e.path()));
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) r.samples.push_back(Json::parse(line));
    }
  }
  fs::remove_all(out);
  return r;
}

TEST(E2E_Statistics, BoolqIntervalsAndPassageClusters) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  BoolqRun r = run_boolq("full", "--show_ci");
  ASSERT_EQ(r.cmd.exit_code, 0) << r.cmd.err;
  ASSERT_FALSE(r.samples.empty());
  // `results` carries the reference's keys only.
  std::set<std::string> keys;
  for (auto& [k, v] : r.results["results"]["boolq"].items()) keys.insert(k);
  EXPECT_EQ(keys,
            (std::set<std::string>{"name", "alias", "sample_len", "acc,none", "acc_stderr,none"}));

  const Json& st = r.results["statistics"]["boolq"];
  std::vector<double> acc;
  std::vector<std::string> passages;
  double correct = 0;
  for (const auto& s : r.samples) {
    acc.push_back(s["acc"].get<double>());
    passages.push_back(s["doc"]["passage"].get<std::string>());
    correct += acc.back();
  }
  EXPECT_EQ(st["n"], acc.size());
  EXPECT_EQ(st["cluster_key"], "passage");
  // Clusters: the distinct passages of the logged documents.
  EXPECT_EQ(st["acc_n_clusters,none"].get<size_t>(),
            std::set<std::string>(passages.begin(), passages.end()).size());
  EXPECT_LT(st["acc_n_clusters,none"].get<size_t>(), acc.size());  // BoolQ does repeat passages
  EXPECT_DOUBLE_EQ(st["acc_stderr_clustered,none"].get<double>(),
                   lmeval::stats::clustered_stderr(acc, passages).stderr);
  // The interval of a task with clusters comes from the clustered SE (2,939 passages: normal).
  const double score = r.results["results"]["boolq"]["acc,none"];
  const double se_cl = st["acc_stderr_clustered,none"];
  EXPECT_EQ(st["acc_ci95_method,none"], "clustered_normal");
  EXPECT_NEAR(st["acc_ci95,none"][0].get<double>(), score - 1.959963984540054 * se_cl, 1e-12);
  EXPECT_NEAR(st["acc_ci95,none"][1].get<double>(), score + 1.959963984540054 * se_cl, 1e-12);
  // MDE80 of two independent runs from the larger of the plain and the clustered SE: the textbook
  // (z_0.975 + z_0.8) * sqrt(2) * se, less a little for the second rejection tail (Phi(-4.76) ~
  // 1e-6 of power).
  const double se = std::max(se_cl, r.results["results"]["boolq"]["acc_stderr,none"].get<double>());
  const double textbook = (1.959963984540054 + 0.8416212335729143) * std::sqrt(2.0) * se;
  EXPECT_LT(st["acc_mde80,none"].get<double>(), textbook);
  EXPECT_NEAR(st["acc_mde80,none"].get<double>(), textbook, 1e-5 * textbook);
  // --show_ci: the extra columns and the notes.
  EXPECT_NE(r.cmd.out.find("95% CI"), std::string::npos);
  EXPECT_NE(r.cmd.out.find("(" + st["acc_n_clusters,none"].dump() + " clusters)"),
            std::string::npos);
  EXPECT_NE(r.cmd.out.find("MDE80: "), std::string::npos);
}

TEST(E2E_Statistics, SmallSampleIsExactAndNoted) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  BoolqRun r = run_boolq("small", "--limit 40 --show_ci");
  ASSERT_EQ(r.cmd.exit_code, 0) << r.cmd.err;
  const Json& st = r.results["statistics"]["boolq"];
  // BoolQ has passages as clusters: the interval is the clustered one even at 40 items.
  EXPECT_EQ(st["acc_ci95_method,none"].get<std::string>().rfind("clustered_", 0), 0u) << st.dump();
  EXPECT_NE(r.cmd.out.find("Fewer than 100 items"), std::string::npos);
  EXPECT_NE(r.cmd.out.find("boolq (n=40)"), std::string::npos);
}

// A score with no spread (the dummy model gets none of these GSM8K items right) has an MDE of
// "undefined", with the reason, never 0.
TEST(E2E_Statistics, ZeroStandardErrorGivesAnUndefinedMde) {
  LMEVAL_REQUIRE_SHARED("hf_data/openai/gsm8k");
  const fs::path out =
      fs::temp_directory_path() / ("lmeval_statistics_zero_se_" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto cmd = lmeval::testing::run_command(
      "'" + lmeval::testing::lmeval_binary().string() +
      "' run --model dummy --tasks gsm8k --limit 10 --show_ci --data_dir '" +
      (lmeval::testing::shared_dir() / "hf_data").string() + "' --output_path '" + out.string() +
      "' 2>/dev/null");
  Json results;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().filename().string().rfind("results_", 0) == 0)
      results = Json::parse(lmeval::testing::read_file(e.path()));
  fs::remove_all(out);
  ASSERT_EQ(cmd.exit_code, 0) << cmd.err;
  const Json& res = results["results"]["gsm8k"];
  ASSERT_EQ(res["exact_match,strict-match"], 0.0) << res.dump();
  const Json& st = results["statistics"]["gsm8k"];
  EXPECT_TRUE(st["exact_match_mde80,strict-match"].is_null()) << st.dump();
  EXPECT_NE(
      st["exact_match_mde80_undefined,strict-match"].get<std::string>().find("zero standard error"),
      std::string::npos);
  // The exact interval of 0/10 is still defined: [0, 0.3085].
  EXPECT_EQ(st["exact_match_ci95_method,strict-match"], "clopper_pearson");
  EXPECT_NE(cmd.out.find("undefined|"), std::string::npos)
      << cmd.out;  // the MDE80 cell, the last column
  EXPECT_NE(cmd.out.find("gsm8k exact_match_mde80,strict-match undefined: zero standard error"),
            std::string::npos)
      << cmd.out;
}

TEST(E2E_Statistics, DefaultTableHasNoStatisticsColumns) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  BoolqRun r = run_boolq("default", "--limit 5");
  ASSERT_EQ(r.cmd.exit_code, 0) << r.cmd.err;
  EXPECT_EQ(r.cmd.out.find("95% CI"), std::string::npos);
  EXPECT_EQ(r.cmd.out.find("MDE80"), std::string::npos);
  EXPECT_TRUE(
      r.results["statistics"]["boolq"].contains("acc_ci95,none"));  // the file always has them
}

TEST(E2E_Statistics, ManifestNamesWhatShapesTheScores) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  BoolqRun a = run_boolq("manifest_a", "--limit 5");
  BoolqRun b = run_boolq("manifest_b", "--limit 5");
  BoolqRun c = run_boolq("manifest_c", "--limit 5 --system_instruction 'Answer yes or no.'");
  ASSERT_EQ(a.cmd.exit_code, 0) << a.cmd.err;
  ASSERT_EQ(c.cmd.exit_code, 0) << c.cmd.err;
  const Json& ta = a.results["manifest"]["tasks"]["boolq"];
  const Json& tb = b.results["manifest"]["tasks"]["boolq"];
  const Json& tc = c.results["manifest"]["tasks"]["boolq"];
  EXPECT_EQ(ta, tb);  // the same run twice: the same hashes
  EXPECT_EQ(ta["n_docs"], 5);
  EXPECT_EQ(ta["n_requests"], 10);  // two choices per question
  EXPECT_EQ(ta["prompts_sha256"].get<std::string>().size(), 64u);
  EXPECT_NE(ta["prompts_sha256"],
            tc["prompts_sha256"]);                      // a system instruction changes every prompt
  EXPECT_EQ(ta["config_sha256"], tc["config_sha256"]);  // ... but not the task
  EXPECT_TRUE(a.results["manifest"]["system_instruction_sha256"].is_null());
  EXPECT_EQ(c.results["manifest"]["system_instruction_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(a.results["manifest"]["bos_policy"], "tokenizer_default");
  // The same manifest hashes with and without --log_samples' prompt hashes: built from requests.
  EXPECT_TRUE(a.results["manifest"].contains("chat_template_sha256"));
}

TEST(E2E_Statistics, ContinuousMetricsFromTheChoicesLikelihoods) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  BoolqRun r = run_boolq("continuous", "--limit 30 --continuous_metrics");
  ASSERT_EQ(r.cmd.exit_code, 0) << r.cmd.err;
  ASSERT_EQ(r.samples.size(), 30u);
  double sum_p = 0, sum_m = 0;
  for (const auto& s : r.samples) {
    // The logged log-likelihoods of "no" and "yes" (strings, as the reference logs them).
    const double l0 = std::stod(s["filtered_resps"][0][0].get<std::string>());
    const double l1 = std::stod(s["filtered_resps"][1][0].get<std::string>());
    const int gold = s["doc"]["label"].get<int>();
    const double lg = gold ? l1 : l0, lw = gold ? l0 : l1;
    const double p = 1 / (1 + std::exp(lw - lg));  // two-way softmax
    EXPECT_NEAR(s["p_correct"].get<double>(), p, 1e-12);
    EXPECT_NEAR(s["logprob_gold_margin"].get<double>(), lg - lw, 1e-12);
    EXPECT_EQ(s["acc"].get<double>() == 1.0, lg > lw);
    sum_p += p;
    sum_m += lg - lw;
  }
  const Json& res = r.results["results"]["boolq"];
  EXPECT_NEAR(res["p_correct,none"].get<double>(), sum_p / 30, 1e-12);
  EXPECT_NEAR(res["logprob_gold_margin,none"].get<double>(), sum_m / 30, 1e-12);
  EXPECT_TRUE(res.contains("p_correct_stderr,none"));
  EXPECT_EQ(r.results["higher_is_better"]["boolq"]["p_correct"], true);
  // Off by default: the reference's metrics only.
  BoolqRun d = run_boolq("continuous_off", "--limit 3");
  EXPECT_FALSE(d.results["results"]["boolq"].contains("p_correct,none"));
}

// TruthfulQA MC2 scores itself (utils.process_results_mc2); its golds are every answer labelled 1,
// so p_correct is the true answers' share of the softmax and the margin is best true minus best
// false.
TEST(E2E_Statistics, ContinuousMetricsOfATaskWithItsOwnProcessResults) {
  LMEVAL_REQUIRE_SHARED("hf_data/truthfulqa/truthful_qa/multiple_choice");
  const auto run = [](const std::string& name, const std::string& extra) {
    fs::path out = fs::temp_directory_path() /
                   ("lmeval_statistics_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(out);
    auto cmd = lmeval::testing::run_command(
        "'" + lmeval::testing::lmeval_binary().string() +
        "' run --model dummy --tasks truthfulqa_mc2 --limit 25 --log_samples --data_dir '" +
        (lmeval::testing::shared_dir() / "hf_data").string() + "' --output_path '" + out.string() +
        "' " + extra + " 2>&1");
    EXPECT_EQ(cmd.exit_code, 0) << cmd.out;
    Json results;
    std::vector<Json> samples;
    for (const auto& e : fs::recursive_directory_iterator(out)) {
      const std::string f = e.path().filename().string();
      if (f.rfind("results_", 0) == 0) results = Json::parse(lmeval::testing::read_file(e.path()));
      if (f.rfind("samples_truthfulqa_mc2", 0) == 0)
        samples = lmeval::testing::read_jsonl(e.path());
    }
    fs::remove_all(out);
    return std::make_pair(results, samples);
  };
  auto [results, samples] = run("mc2_continuous", "--continuous_metrics");
  ASSERT_EQ(samples.size(), 25u);
  double sum_p = 0, sum_m = 0;
  int mixed = 0;
  for (const auto& s : samples) {
    const Json& labels = s["doc"]["mc2_targets"]["labels"];
    ASSERT_EQ(labels.size(), s["filtered_resps"].size());
    double z = 0, true_mass = 0, best_true = -INFINITY, best_false = -INFINITY;
    for (size_t i = 0; i < labels.size(); ++i) {
      const double ll = std::stod(s["filtered_resps"][i][0].get<std::string>());
      z += std::exp(ll);
      if (labels[i] == 1) {
        true_mass += std::exp(ll);
        best_true = std::max(best_true, ll);
      } else {
        best_false = std::max(best_false, ll);
      }
    }
    ASSERT_TRUE(std::isfinite(best_true) && std::isfinite(best_false));  // MC2 has both kinds
    mixed += best_true > best_false;
    EXPECT_NEAR(s["p_correct"].get<double>(), true_mass / z, 1e-12);
    EXPECT_NEAR(s["logprob_gold_margin"].get<double>(), best_true - best_false, 1e-12);
    EXPECT_NEAR(s["acc"].get<double>(), true_mass / z,
                1e-12);  // the reference's MC2 score is that same mass
    sum_p += true_mass / z;
    sum_m += best_true - best_false;
  }
  EXPECT_GT(mixed, 0);
  EXPECT_LT(mixed, 25);
  const Json& res = results["results"]["truthfulqa_mc2"];
  EXPECT_NEAR(res["p_correct,none"].get<double>(), sum_p / 25, 1e-12);
  EXPECT_NEAR(res["logprob_gold_margin,none"].get<double>(), sum_m / 25, 1e-12);
  EXPECT_TRUE(res.contains("logprob_gold_margin_stderr,none"));
  // Off by default: the reference's metric only, with the same value.
  auto [plain, plain_samples] = run("mc2_plain", "");
  const Json& pr = plain["results"]["truthfulqa_mc2"];
  EXPECT_FALSE(pr.contains("p_correct,none"));
  EXPECT_FALSE(plain_samples.at(0).contains("p_correct"));
  EXPECT_EQ(pr["acc,none"], res["acc,none"]);
}

TEST(E2E_Statistics, ValidateNamesABadClusterKey) {
  fs::path dir = fs::temp_directory_path() / ("lmeval_statistics_ck_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "d.jsonl") << "{\"q\": \"x\"}\n";
  std::ofstream(dir / "ck.yaml")
      << "task: ck_bad\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: "
      << (dir / "d.jsonl").string()
      << "\ntest_split: test\noutput_type: multiple_choice\ndoc_to_text: \"{{q}}\"\n"
         "doc_to_target: 0\ndoc_to_choice: [\"a\", \"b\"]\ncluster_key: 5\n";
  auto r = lmeval::testing::run_command("'" + lmeval::testing::lmeval_binary().string() +
                                        "' validate --model dummy --tasks ck_bad --include_path '" +
                                        dir.string() + "'");
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ck.yaml:11:1: cluster_key: field 'cluster_key' has the wrong type"),
            std::string::npos)
      << r.err;
}

TEST(E2E_Statistics, NormalizedColumnIsNamedBesideTheRawScore) {
  LMEVAL_REQUIRE_SHARED("hf_data/aps/super_glue/boolq");
  // By default: BoolQ has two choices, so a random baseline of 0.5.
  BoolqRun r = run_boolq("normalized", "--limit 5");
  ASSERT_EQ(r.cmd.exit_code, 0) << r.cmd.err;
  EXPECT_NE(r.cmd.out.find("|Value (raw)|"), std::string::npos) << r.cmd.out;
  EXPECT_NE(r.cmd.out.find("|Normalised (leaderboard)|"), std::string::npos) << r.cmd.out;
  EXPECT_NE(r.cmd.out.find("Normalised (leaderboard): the Open LLM Leaderboard's"),
            std::string::npos);
  const Json& n = r.results["leaderboard_normalized"]["tasks"]["boolq"]["acc,none"];
  EXPECT_EQ(n["random_baseline"], 0.5) << n.dump();
  const double raw = r.results["results"]["boolq"]["acc,none"];
  EXPECT_EQ(n["raw"], raw);
  EXPECT_NEAR(n["normalized"].get<double>(), std::max(0.0, (raw - 0.5) / 0.5 * 100), 1e-12);
  // The flag is still accepted and changes nothing.
  BoolqRun f = run_boolq("normalized_flag", "--limit 5 --show_normalized");
  ASSERT_EQ(f.cmd.exit_code, 0) << f.cmd.err;
  EXPECT_EQ(f.cmd.out.substr(f.cmd.out.find("dummy (")),
            r.cmd.out.substr(r.cmd.out.find("dummy (")));
}

}  // namespace

// `lm-eval compare` on real runs: scores and pairing checked against the runs' own results and
// samples files, the refusal to compare different prompts, groups, small tasks, --output JSON.
#include "lmeval/analysis/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "analysis/run_fixture.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/stats/paired.hpp"

using lmeval::testing::AnalysisRuns;
using lmeval::testing::read_file;
using Json = nlohmann::json;

namespace {
class Compare : public AnalysisRuns {};

const Json& row(const Json& cmp, const std::string& task, const std::string& metric) {
  for (const auto& r : cmp["tasks"])
    if (r["task"] == task && r["metric"] == metric) return r;
  static const Json none;
  ADD_FAILURE() << "no row " << task << " " << metric;
  return none;
}
}  // namespace

TEST_F(Compare, ScoresDifferencesAndTestsFromTheRuns) {
  const std::string out = (dir() / ("cmp_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("a") + " " + run("b") + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  const Json ra = Json::parse(read_file(results_file("a")));
  const Json rb = Json::parse(read_file(results_file("b")));
  for (const char* task : {"qa_one", "qa_two"}) {
    SCOPED_TRACE(task);
    const Json& m = row(cmp, task, "acc");
    // The paired means are the scores the runs themselves reported.
    EXPECT_NEAR(m["score_a"].get<double>(), ra["results"][task]["acc,none"].get<double>(), 1e-12);
    EXPECT_NEAR(m["score_b"].get<double>(), rb["results"][task]["acc,none"].get<double>(), 1e-12);
    EXPECT_NEAR(m["diff"].get<double>(), m["score_b"].get<double>() - m["score_a"].get<double>(),
                1e-12);
    EXPECT_EQ(m["n"], 150);
    EXPECT_EQ(m["test"], "mcnemar_exact");
    EXPECT_EQ(m["interval"], "exact_conditional");
    // Discordant pairs counted here from the samples files, matched by doc_hash.
    auto sa = item_scores("a", task), sb = item_scores("b", task);
    std::size_t only_a = 0, only_b = 0;
    for (const auto& [hash, v] : sa) {
      only_a += v > sb.at(hash);
      only_b += sb.at(hash) > v;
    }
    EXPECT_EQ(m["discordant"]["only_a"], only_a);
    EXPECT_EQ(m["discordant"]["only_b"], only_b);
    EXPECT_DOUBLE_EQ(m["p_value"].get<double>(), lmeval::stats::mcnemar_exact_p(only_a, only_b));
    // The interval is the one McNemar's exact test inverts, so it excludes 0 exactly when p < 0.05.
    const auto e = lmeval::stats::mcnemar_difference(only_a, only_b, 150);
    EXPECT_DOUBLE_EQ(m["ci95"][0].get<double>(), e.ci_low);
    EXPECT_DOUBLE_EQ(m["ci95"][1].get<double>(), e.ci_high);
    EXPECT_LE(m["ci95"][0].get<double>(), m["diff"].get<double>());
    EXPECT_GE(m["ci95"][1].get<double>(), m["diff"].get<double>());
    EXPECT_EQ(m["ci95"][0].get<double>() > 0 || m["ci95"][1].get<double>() < 0,
              m["p_value"].get<double>() < 0.05);
    EXPECT_GT(m["mde80"].get<double>(), 0.0);
    EXPECT_NE(r.out.find(std::string(task) + " acc,none: B - A = "), std::string::npos) << r.out;
  }
  // The group: size-weighted difference of its two tasks.
  ASSERT_EQ(cmp["groups"].size(), 2u);  // acc and acc_norm
  const Json& g = cmp["groups"][0];
  EXPECT_EQ(g["group"], "qa_group");
  EXPECT_EQ(g["n"], 300);
  const double d1 = row(cmp, "qa_one", g["metric"])["diff"],
               d2 = row(cmp, "qa_two", g["metric"])["diff"];
  EXPECT_NEAR(g["diff"].get<double>(), (150 * d1 + 150 * d2) / 300, 1e-12);
  EXPECT_NE(r.out.find("qa_group (group)"), std::string::npos);
  EXPECT_NE(r.out.find("the runs differ in config.model_args"), std::string::npos) << r.out;
}

namespace {
// Trimmed cells of the text table's row for `task` and `metric`.
std::vector<std::string> text_row(const std::string& out, const std::string& task,
                                  const std::string& metric) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    std::string cell;
    std::getline(l, cell, '|');
    while (std::getline(l, cell, '|')) {
      const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (cells.size() > 2 && cells[0] == task && cells[1] == metric) return cells;
  }
  return {};
}
}  // namespace

// Every fixture question has four choices: a random baseline of 0.25, and the leaderboard's
// normalised score max(0, (raw - 0.25) / 0.75) * 100 of each run, with the raw means taken here
// from the samples files.
TEST_F(Compare, NormalisedScoresBesideTheRawOnes) {
  const std::string out = (dir() / ("cmp_norm_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("a") + " " + run("b") + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  auto mean = [](const std::map<std::string, double>& m) {
    double s = 0;
    for (const auto& [k, v] : m) s += v;
    return s / static_cast<double>(m.size());
  };
  auto lb = [](double raw) { return std::max(0.0, (raw - 0.25) / 0.75) * 100; };
  int unclipped = 0;
  for (const char* task : {"qa_one", "qa_two"})
    for (const char* metric : {"acc", "acc_norm"}) {
      SCOPED_TRACE(std::string(task) + " " + metric);
      const double a = lb(mean(item_scores("a", task, metric))),
                   b = lb(mean(item_scores("b", task, metric)));
      unclipped += a > 0 || b > 0;
      const Json& n = row(cmp, task, metric)["normalized"];
      EXPECT_EQ(n["random_baseline"], 0.25);
      EXPECT_NEAR(n["score_a"].get<double>(), a, 1e-9);
      EXPECT_NEAR(n["score_b"].get<double>(), b, 1e-9);
      EXPECT_NEAR(n["diff"].get<double>(), b - a, 1e-9);
      auto cells = text_row(r.out, task, metric);
      ASSERT_EQ(cells.size(), 15u) << r.out;
      EXPECT_EQ(cells[12], fmt::format("{:.2f}", a));
      EXPECT_EQ(cells[13], fmt::format("{:.2f}", b));
      EXPECT_EQ(cells[14], fmt::format("{:+.2f}", b - a));
    }
  EXPECT_GT(unclipped, 0);  // not every score at or below chance
  for (const char* h : {"| A (raw) ", "| B (raw) ", "| B-A (raw) ", "| A (normalised) ",
                        "| B (normalised) ", "| B-A (normalised) |"})
    EXPECT_NE(r.out.find(h), std::string::npos) << h << "\n" << r.out;
  EXPECT_NE(r.out.find("random baselines: qa_one 0.2500, qa_two 0.2500"), std::string::npos)
      << r.out;
}

TEST_F(Compare, IdenticalRunsAreWithinNoiseAndTheirSpreadIsUndefined) {
  const std::string out = (dir() / ("cmp_same_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("a") + " " + run("a_again") + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Zero SE: the interval and the MDE are undefined (with the reason), never [+0, +0] or 0.
  EXPECT_NE(
      r.out.find(
          "qa_one acc,none: B - A = +0.0000 (95% CI undefined, p = 1.0000): not distinguishable"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("qa_one acc,none: per-item correlation 1.0000; MDE80 undefined: the runs "
                       "agree on every item: the "
                       "standard error is 0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("qa_one acc,none: 95% CI undefined: no discordant items"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("0.0000 would be detected"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(": distinguishable"), std::string::npos);
  const Json m = row(Json::parse(read_file(out))["comparisons"][0], "qa_one", "acc");
  std::filesystem::remove(out);
  EXPECT_TRUE(m["ci95"].is_null());
  EXPECT_TRUE(m["mde80"].is_null());
  EXPECT_TRUE(m["undefined"]["mde80"].is_string());
  EXPECT_TRUE(m["undefined"]["ci95"].is_string());
  EXPECT_EQ(m["p_value"], 1.0);
}

TEST_F(Compare, SmallTasksSayWhichExactMethod) {
  auto r = lm("compare " + run("small_a") + " " + run("small_b"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("40 items (< 100): McNemar's exact test and the Clopper-Pearson interval of its "),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("bootstrap"), std::string::npos) << r.out;
}

TEST_F(Compare, CommonItemsPairsTheSharedDocuments) {
  const std::string out = (dir() / ("cmp_common_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("a") + " " + run("b_limit") + " --common_items --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  EXPECT_EQ(row(cmp, "qa_one", "acc")["n"], 40);
  EXPECT_NE(r.out.find("--common_items: qa_one: compared on the 40 documents both runs answered; "
                       "left out 110 only in "
                       "model-a and 0 only in model-b"),
            std::string::npos)
      << r.out;
  // The paired scores are those of the 40 shared documents, taken here from the samples files.
  auto sa = item_scores("a", "qa_one"), sb = item_scores("b_limit", "qa_one");
  double ma = 0, mb = 0;
  for (const auto& [hash, v] : sb) {
    ma += sa.at(hash);
    mb += v;
  }
  EXPECT_NEAR(row(cmp, "qa_one", "acc")["score_a"].get<double>(), ma / 40, 1e-12);
  EXPECT_NEAR(row(cmp, "qa_one", "acc")["score_b"].get<double>(), mb / 40, 1e-12);
  // Different prompts are still refused.
  auto refused = lm("compare " + run("a") + " " + run("b_fewshot") + " --common_items");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("prompt hashes"), std::string::npos) << refused.err;
}

// Few-shot seeds: compare's scores are the seed means the runs' fewshot_seed_variance records,
// every row says so, and the total SE over items and seeds is at least the items-only one.
TEST_F(Compare, SeedRunsCompareTheSeedMeansAndSaySo) {
  const std::string out = (dir() / ("cmp_seeds_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("seeds_a") + " " + run("seeds_b") + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  const Json ra = Json::parse(read_file(results_file("seeds_a")));
  const Json& m = row(cmp, "qa_one", "acc");
  EXPECT_EQ(m["score_basis"], "mean of 3 few-shot seeds");
  EXPECT_NEAR(m["score_a"].get<double>(),
              ra["fewshot_seed_variance"]["qa_one"]["acc,none"]["mean"].get<double>(), 1e-12);
  EXPECT_EQ(m["seeds"]["count"], 3);
  EXPECT_GE(m["seeds"]["se_total"].get<double>(), m["seeds"]["se_items"].get<double>());
  EXPECT_NEAR(m["seeds"]["se_items"].get<double>(), m["se"].get<double>(),
              1e-12);  // seeds fixed: the paired t's SE
  EXPECT_NE(r.out.find("qa_one acc,none: scores are means over 3 few-shot seeds; total SE"),
            std::string::npos)
      << r.out;
  // A plain run says it is one seed.
  auto plain = lm("compare " + run("a") + " " + run("b") + " --output " + out);
  EXPECT_EQ(row(Json::parse(read_file(out))["comparisons"][0], "qa_one", "acc")["score_basis"],
            "one few-shot seed");
  std::filesystem::remove(out);
}

// --series: three runs read as checkpoints; the scores are the runs' own, monotonicity is Kendall's
// tau-b of (order, score) computed here by hand, signal/noise the change over the last run's
// stderr.
TEST_F(Compare, SeriesGivesMonotonicityAndSignalToNoise) {
  const std::string out = (dir() / ("cmp_series_" + std::to_string(getpid()) + ".json")).string();
  auto r =
      lm("compare " + run("a") + " " + run("b") + " " + run("c") + " --series --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json s = Json::parse(read_file(out));
  std::filesystem::remove(out);
  const Json res[3] = {Json::parse(read_file(results_file("a"))),
                       Json::parse(read_file(results_file("b"))),
                       Json::parse(read_file(results_file("c")))};
  bool found = false;
  for (const auto& row : s["series"]) {
    if (row["task"] != "qa_one" || row["metric"] != "acc,none") continue;
    found = true;
    double y[3];
    for (int k = 0; k < 3; ++k) {
      y[k] = res[k]["results"]["qa_one"]["acc,none"].get<double>();
      EXPECT_DOUBLE_EQ(row["scores"][k].get<double>(), y[k]);
    }
    // tau-b over 3 pairs with x strictly increasing: (concordant - discordant) / sqrt(3 * (3 - ties
    // in y)).
    double c = 0, d = 0, ties = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) {
        if (y[j] > y[i])
          ++c;
        else if (y[j] < y[i])
          ++d;
        else
          ++ties;
      }
    EXPECT_NEAR(row["monotonicity"].get<double>(), (c - d) / std::sqrt(3 * (3 - ties)), 1e-12);
    const double se = res[2]["results"]["qa_one"]["acc_stderr,none"].get<double>();
    EXPECT_NEAR(row["signal_to_noise"].get<double>(), (y[2] - y[0]) / se, 1e-12);
    EXPECT_EQ(row["noise_kind"], "stderr (item sampling)");
  }
  EXPECT_TRUE(found) << s.dump();
  EXPECT_NE(r.out.find("Monotonicity (Kendall tau)"), std::string::npos) << r.out;
  EXPECT_EQ(lm("compare " + run("a") + " " + run("b") + " --series").exit_code, 2);
}

TEST_F(Compare, CorrectionAdjustsEveryRowLikeStatsmodels) {
  const std::string out = (dir() / ("cmp_holm_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("a") + " " + run("c") + " --correction holm --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  EXPECT_EQ(cmp["correction"], "holm");
  // Holm by hand over the rows' own p-values: sorted ascending, (m - k)·p, running maximum, capped
  // at 1.
  std::vector<std::pair<double, std::size_t>> ps;
  for (std::size_t i = 0; i < cmp["tasks"].size(); ++i)
    ps.emplace_back(cmp["tasks"][i]["p_value"].get<double>(), i);
  std::sort(ps.begin(), ps.end());
  double running = 0;
  for (std::size_t k = 0; k < ps.size(); ++k) {
    running = std::max(running, std::min(1.0, static_cast<double>(ps.size() - k) * ps[k].first));
    const Json& m = cmp["tasks"][ps[k].second];
    EXPECT_NEAR(m["p_adjusted"].get<double>(), running, 1e-12);
    EXPECT_EQ(m["significant"].get<bool>(), running < 0.05);
  }
  EXPECT_NE(r.out.find("| p (holm) |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Holm-adjusted over the 4 task rows"), std::string::npos) << r.out;
  EXPECT_EQ(lm("compare " + run("a") + " " + run("c") + " --correction bonferroni").exit_code, 2);
}

TEST_F(Compare, RefusesDifferentFewShot) {
  auto r = lm("compare " + run("a") + " " + run("b_fewshot"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did not ask the same questions"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("qa_one: num_fewshot: 0 vs 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("qa_one: prompt hashes: 150 of the common documents have different prompts"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(Compare, RefusesDifferentDocuments) {
  auto r = lm("compare " + run("a") + " " + run("b_limit"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("qa_one: document hashes: 110 documents only in model-a (first: doc_id 40), "
                       "0 only in model-b"),
            std::string::npos)
      << r.err;
}

TEST_F(Compare, ClusterKeyTemplateGivesTheClusteredTest) {
  // qa_clustered declares cluster_key: "{{topic}}" (13 topics); the runs' manifests are compared
  // too.
  const std::string out = (dir() / ("cmpc_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("compare " + run("clustered_a") + " " + run("clustered_b") + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cmp = Json::parse(read_file(out))["comparisons"][0];
  std::filesystem::remove(out);
  const Json& m = row(cmp, "qa_clustered", "acc");
  EXPECT_EQ(m["test"], "clustered_t");  // 13 clusters: t with 12 df
  EXPECT_EQ(m["df"], 12);
  EXPECT_EQ(m["clusters"], 13);
  const Json ra = Json::parse(read_file(results_file("clustered_a")));
  if (ra.contains("statistics"))
    EXPECT_EQ(ra["statistics"]["qa_clustered"]["acc_n_clusters,none"], 13);
  auto an =
      lm("analyze " + run("clustered_a") + " " + run("clustered_b") + " " + run("clustered_c"));
  ASSERT_EQ(an.exit_code, 0) << an.err;
  EXPECT_NE(an.out.find("of 1000 cluster resamples"), std::string::npos) << an.out;
}

TEST(CompareLibrary, ClusteredTaskUsesClusterRobustTest) {
  // A hand-written run pair whose task declares cluster_key: compare switches to the clustered
  // test.
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("lmeval_cluster_" + std::to_string(getpid()));
  fs::remove_all(d);
  for (const char* who : {"a", "b"}) {
    fs::create_directories(d / who);
    Json res = {{"results", {{"t", {{"acc,none", 0.5}}}}},
                {"configs", {{"t", {{"task", "t"}, {"cluster_key", "topic"}}}}},
                {"versions", {{"t", 1}}},
                {"n-shot", {{"t", 0}}},
                {"model_name", who}};
    std::ofstream(d / who / "results_2026-01-01T00-00-00.json") << res.dump();
    std::ofstream s(d / who / "samples_t_2026-01-01T00-00-00.jsonl");
    for (int i = 0; i < 120; ++i) {
      const int v = std::string(who) == "a" ? (i % 3 == 0) : (i % 2 == 0);
      s << Json{{"doc_id", i},
                {"doc", {{"topic", "k" + std::to_string(i / 10)}}},
                {"doc_hash", "h" + std::to_string(i)},
                {"prompt_hash", "p" + std::to_string(i)},
                {"filter", "none"},
                {"metrics", {"acc"}},
                {"acc", v}}
               .dump()
        << "\n";
    }
  }
  auto a = lmeval::analysis::load_run((d / "a").string());
  auto b = lmeval::analysis::load_run((d / "b").string());
  auto c = lmeval::analysis::compare_runs(a, b);
  fs::remove_all(d);
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].test, "clustered_t");
  EXPECT_EQ(c.metrics[0].clusters, 12u);
  std::vector<double> va, vb;
  std::vector<std::string> cl;
  for (int i = 0; i < 120; ++i) {
    va.push_back(i % 3 == 0);
    vb.push_back(i % 2 == 0);
    cl.push_back("k" + std::to_string(i / 10));
  }
  const auto want = lmeval::stats::clustered_paired_difference(va, vb, cl);
  EXPECT_DOUBLE_EQ(c.metrics[0].se, want.se);
  EXPECT_DOUBLE_EQ(c.metrics[0].p, want.p);
  EXPECT_DOUBLE_EQ(c.metrics[0].ci_low, want.ci_low);
  // MDE from the larger of the paired and the clustered SE.
  const auto plain = lmeval::stats::paired_t(va, vb);
  EXPECT_DOUBLE_EQ(c.metrics[0].se_mde, std::max(plain.se, want.se));
}

TEST_F(Compare, ManifestDifferencesExplainScores) {
  auto runs = lmeval::analysis::load_runs({run("a"), run("b")});
  runs[0].results["manifest"] = {
      {"tokenizer_sha", "t1"}, {"bos", "prepend"}, {"chat_template_sha", nullptr}};
  runs[1].results["manifest"] = {
      {"tokenizer_sha", "t2"}, {"bos", "prepend"}, {"chat_template_sha", nullptr}};
  const auto c = lmeval::analysis::compare_runs(runs[0], runs[1]);
  EXPECT_NE(std::find(c.setting_differences.begin(), c.setting_differences.end(),
                      "manifest tokenizer_sha: \"t1\" vs \"t2\""),
            c.setting_differences.end());
  for (const auto& s : c.setting_differences)
    EXPECT_EQ(s.find("manifest bos"), std::string::npos) << s;
}

// Issue 32: a samples line whose score was the string "NaN" was dropped without a word; it is an
// error naming the file, line and metric.
TEST(CompareLibrary, StringScoreIsAnErrorNotADroppedLine) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("lmeval_strscore_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  Json res = {{"results", {{"t", {{"acc,none", 0.5}}}}},
              {"configs", {{"t", {{"task", "t"}}}}},
              {"versions", {{"t", 1}}},
              {"n-shot", {{"t", 0}}},
              {"model_name", "a"}};
  std::ofstream(d / "results_2026-01-01T00-00-00.json") << res.dump();
  {
    std::ofstream s(d / "samples_t_2026-01-01T00-00-00.jsonl");
    for (int i = 0; i < 3; ++i)
      s << Json{{"doc_id", i},
                {"doc_hash", "h" + std::to_string(i)},
                {"filter", "none"},
                {"metrics", {"acc"}},
                {"acc", i == 1 ? Json("NaN") : Json(1)}}
               .dump()
        << "\n";
  }
  try {
    lmeval::analysis::load_run(d.string());
    ADD_FAILURE() << "no error";
  } catch (const lmeval::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("samples_t_2026-01-01T00-00-00.jsonl:2: acc: metric 'acc' is the string "
                     "\"NaN\""),
              std::string::npos)
        << m;
  }
  fs::remove_all(d);
}

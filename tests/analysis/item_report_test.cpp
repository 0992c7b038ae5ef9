// `lm-eval analyze` on three real runs: difficulty and the items no run gets right checked against
// the samples files read here; the bootstrap is deterministic with --seed.
#include "lmeval/analysis/item_report.hpp"

#include <algorithm>
#include <cstdio>

#include "analysis/run_fixture.hpp"

using lmeval::testing::AnalysisRuns;
using lmeval::testing::read_file;
using Json = nlohmann::json;

namespace {
class Analyze : public AnalysisRuns {};
}  // namespace

TEST_F(Analyze, ItemStatisticsFromTheSamples) {
  const std::string out = (dir() / ("an_" + std::to_string(getpid()) + ".json")).string();
  auto r =
      lm("analyze " + run("a") + " " + run("b") + " " + run("c") + " --seed 11 --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json an = Json::parse(read_file(out));
  std::filesystem::remove(out);
  ASSERT_EQ(an["tasks"].size(), 2u);
  const Json& t = an["tasks"][0];
  EXPECT_EQ(t["task"], "qa_one");
  EXPECT_EQ(t["metric"], "acc,none");
  EXPECT_EQ(t["items"], 150);
  auto sa = item_scores("a", "qa_one"), sb = item_scores("b", "qa_one"),
       sc = item_scores("c", "qa_one");
  // Item order is doc_id order; the samples are written in doc_id order too.
  std::vector<std::string> hashes;
  {
    std::ifstream in([&] {
      for (const auto& e : std::filesystem::recursive_directory_iterator(dir() / "runs" / "a"))
        if (e.path().filename().string().starts_with("samples_qa_one")) return e.path();
      return std::filesystem::path();
    }());
    std::string line;
    while (std::getline(in, line)) hashes.push_back(Json::parse(line)["doc_hash"]);
  }
  std::size_t never = 0;
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    const double share = (sa[hashes[i]] + sb[hashes[i]] + sc[hashes[i]]) / 3;
    EXPECT_NEAR(t["difficulty"][i].get<double>(), share, 1e-12) << i;
    never += share == 0;
  }
  EXPECT_EQ(t["never_correct_count"], never);
  EXPECT_EQ(t["never_correct"].size(), never);
  EXPECT_NE(t["never_correct"][0]["text"].get<std::string>().find("qa_one question"),
            std::string::npos);
  // Three runs: three pairs, each with 1000 resamples split into wins and ties.
  ASSERT_EQ(t["rank_stability_items"].size(), 3u);
  for (const auto& p : t["rank_stability_items"])
    EXPECT_EQ(p["a_above_b"].get<int>() + p["b_above_a"].get<int>() + p["ties"].get<int>(), 1000);
  EXPECT_NE(r.out.find("Rank stability"), std::string::npos);
  // Three runs (fewer than kItemAnalysisMinRuns): the list comes with its caveat, not as
  // label-error candidates.
  EXPECT_NE(r.out.find("Items no run gets right (only 3 runs, fewer than 5: mostly hard items"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("(candidates for label errors)"), std::string::npos);
}

// Four choices per fixture question: a random baseline of 0.25, and each run's normalised score
// max(0, (raw - 0.25) / 0.75) * 100 beside its raw mean, both taken here from the samples files.
TEST_F(Analyze, RawAndNormalisedScoresSideBySide) {
  const std::string out = (dir() / ("an_norm_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("analyze " + run("a") + " " + run("b") + " " + run("c") +
              " --metric acc_norm --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json an = Json::parse(read_file(out));
  std::filesystem::remove(out);
  int unclipped = 0;
  for (const auto& t : an["tasks"]) {
    const std::string task = t["task"];
    SCOPED_TRACE(task);
    EXPECT_EQ(t["random_baseline"], 0.25);
    const char* names[] = {"a", "b", "c"};
    std::string expected_rows;
    for (int k = 0; k < 3; ++k) {
      double sum = 0;
      const auto items = item_scores(names[k], task, "acc_norm");
      for (const auto& [hash, v] : items) sum += v;
      const double raw = sum / static_cast<double>(items.size());
      const double norm = std::max(0.0, (raw - 0.25) / 0.75) * 100;
      unclipped += norm > 0;
      EXPECT_NEAR(t["means"][k].get<double>(), raw, 1e-12);
      EXPECT_NEAR(t["normalized_means"][k].get<double>(), norm, 1e-9);
      char row[64];
      std::snprintf(row, sizeof row, "|       %.3f |                   %6.2f |", raw, norm);
      EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
    }
  }
  EXPECT_GT(unclipped, 0);
  EXPECT_NE(r.out.find("| Run     | Score (raw) | Normalised (leaderboard) |"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Normalised (leaderboard): (raw - random baseline 0.2500)"),
            std::string::npos)
      << r.out;
}

TEST_F(Analyze, DeterministicWithSeed) {
  const std::string runs = run("a") + " " + run("b") + " " + run("c");
  auto x = lm("analyze " + runs + " --seed 5 --resamples 300");
  auto y = lm("analyze " + runs + " --seed 5 --resamples 300");
  auto z = lm("analyze " + runs + " --seed 6 --resamples 300");
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_EQ(x.out, y.out);
  EXPECT_NE(x.out, z.out);
  EXPECT_NE(x.out.find("of 300 item resamples"), std::string::npos) << x.out;
}

TEST_F(Analyze, LargeTasksSampleItemsForCorrelations) {
  lmeval::analysis::AnalyzeOptions opt;
  opt.correlation_items = 50;
  opt.resamples = 10;
  const auto a = lmeval::analysis::analyze_runs(
      lmeval::analysis::load_runs({run("a"), run("b"), run("c")}), opt);
  ASSERT_FALSE(a.tasks.empty());
  EXPECT_EQ(a.tasks[0].items, 150u);
  EXPECT_EQ(a.tasks[0].inter_item_items, 50u);
  EXPECT_EQ(a.tasks[0].inter_item.pairs + a.tasks[0].inter_item.undefined, 50u * 49 / 2);
  const auto again = lmeval::analysis::analyze_runs(
      lmeval::analysis::load_runs({run("a"), run("b"), run("c")}), opt);
  EXPECT_EQ(again.tasks[0].inter_item.mean, a.tasks[0].inter_item.mean);  // the same seeded sample
}

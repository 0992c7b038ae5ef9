// Console tables against the reference's own stdout (../shared/spec/tools/spec_core_dummy_tasks:
// results files and the tables the reference printed for them).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "lmeval/output/output_writer.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

namespace {

Json results_in(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") return Json::parse(lmeval::testing::read_file(e.path()));
  return Json();
}

// The tables printed after the summary line (the first line of stdout.txt), up to "rc=".
std::string printed_tables(const fs::path& stdout_file) {
  std::string s = lmeval::testing::read_file(stdout_file);
  s = s.substr(s.find('\n') + 1);
  auto rc = s.find("rc=");
  if (rc != std::string::npos) s = s.substr(0, rc);
  return s;
}

void check_run(const std::string& run) {
  fs::path dir = lmeval::testing::shared_dir() / "spec/tools/spec_core_dummy_tasks" / run;
  Json r = results_in(dir);
  ASSERT_TRUE(r.is_object());
  std::string ours = lmeval::make_table(r) + "\n";
  if (r.contains("groups")) ours += lmeval::make_table(r, "groups") + "\n";
  EXPECT_EQ(ours, printed_tables(dir / "stdout.txt"));
}

}  // namespace

TEST(Output_Table, MatchesReferenceRunWithGroupAndFilters) {
  LMEVAL_REQUIRE_SHARED("spec/tools/spec_core_dummy_tasks/run1_output");
  check_run("run1_output");
}

TEST(Output_Table, MatchesReferenceRunWithNestedGroups) {
  LMEVAL_REQUIRE_SHARED("spec/tools/spec_core_dummy_tasks/run2_output");
  check_run("run2_output");
}

TEST(Output_Table, WideCharactersCountTwoColumns) {
  std::string t = lmeval::markdown_table({"Task"}, {{Json("東京")}, {Json("ab")}});
  EXPECT_EQ(t, "|Task|\n|----|\n|東京|\n|ab  |\n");
}

namespace {

// The cells of the table row whose Metric cell is `metric` (trimmed), or empty.
std::vector<std::string> row_cells(const std::string& table, const std::string& metric) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream l(line);
    std::getline(l, cell, '|');  // before the first bar
    while (std::getline(l, cell, '|')) {
      size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (cells.size() > 4 && cells[4] == metric) return cells;
  }
  return {};
}

}  // namespace

// Our own results files carry leaderboard_normalized: the table then names the raw value column
// and shows the normalised score beside it, on the row of the metric it normalises.
// (0.625 - 0.25) / (1 - 0.25) * 100 = 50; (0.5 - 0.25) / 0.75 * 100 = 33.33...
TEST(Output_Table, RawAndNormalisedSideBySideWhenATaskHasABaseline) {
  Json r = Json::parse(R"({
    "results": {"t": {"alias": "t", "acc,none": 0.625, "acc_stderr,none": 0.05,
                      "acc_norm,none": 0.5, "acc_norm_stderr,none": 0.05, "f1,none": 0.7}},
    "versions": {"t": 1}, "n-shot": {"t": 0},
    "higher_is_better": {"t": {"acc": true, "acc_norm": true, "f1": true}},
    "leaderboard_normalized": {"tasks": {"t": {
      "acc,none": {"raw": 0.625, "random_baseline": 0.25, "normalized": 50.0},
      "acc_norm,none": {"raw": 0.5, "random_baseline": 0.25, "normalized": 33.333333333333336}}}}})");
  const std::string t = lmeval::make_table(r);
  EXPECT_NE(t.find("|Value (raw)|"), std::string::npos) << t;
  EXPECT_NE(t.find("|Normalised (leaderboard)|"), std::string::npos) << t;
  auto acc = row_cells(t, "acc"), acc_norm = row_cells(t, "acc_norm"), f1 = row_cells(t, "f1");
  ASSERT_EQ(acc.size(), 10u) << t;
  EXPECT_EQ(std::stod(acc[6]), 0.625);
  EXPECT_EQ(std::stod(acc[9]), 50.0);
  EXPECT_EQ(std::stod(acc_norm[6]), 0.5);
  EXPECT_EQ(acc_norm[9], "33.33");
  ASSERT_EQ(f1.size(), 10u);
  EXPECT_EQ(f1[9], "");  // no baseline for f1
  EXPECT_NE(lmeval::normalized_scores_note(r).find(
                "Normalised (leaderboard): the Open LLM Leaderboard's"),
            std::string::npos);
  // Without the block (the reference's own files) the reference's table: one "Value" column.
  r.erase("leaderboard_normalized");
  const std::string plain = lmeval::make_table(r);
  EXPECT_NE(plain.find("|Value|"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("Normalised"), std::string::npos);
  EXPECT_EQ(lmeval::normalized_scores_note(r), "");
}

// A leaderboard group scored by the leaderboard's own rule (BBH: the unweighted mean of the
// normalised subtasks) shows that number beside its raw score, on the rule's metric only, and the
// note under the tables names the rule.
TEST(Output_Table, GroupsShowTheLeaderboardRuleOnItsMetric) {
  Json r = Json::parse(R"({
    "results": {"leaderboard_bbh": {"alias": "leaderboard_bbh", "acc_norm,none": 0.35, "acc_norm_stderr,none": 0.03,
                                    "acc,none": 0.3, "acc_stderr,none": 0.03}},
    "groups": {"leaderboard_bbh": {"alias": "leaderboard_bbh", "acc_norm,none": 0.35, "acc_norm_stderr,none": 0.03,
                                   "acc,none": 0.3, "acc_stderr,none": 0.03}},
    "versions": {}, "n-shot": {}, "higher_is_better": {},
    "leaderboard_normalized": {"tasks": {}, "leaderboard": {"leaderboard_bbh": {
      "normalized": 12.5, "metric": "acc_norm,none", "rule": "unweighted mean of normalised subtask acc_norm"}}}})");
  const std::string g = lmeval::make_table(r, "groups");
  auto acc_norm = row_cells(g, "acc_norm"), acc = row_cells(g, "acc");
  ASSERT_EQ(acc_norm.size(), 10u) << g;
  EXPECT_EQ(acc_norm[9], "12.5");
  EXPECT_EQ(acc[9], "");
  EXPECT_NE(lmeval::normalized_scores_note(r).find(
                "leaderboard_bbh: unweighted mean of normalised subtask acc_norm"),
            std::string::npos);
}

// The few-shot seed table: the mean across seeds, raw, and its normalised value where the task has
// a random baseline: (0.4 - 0.25) / 0.75 * 100 = 20.
TEST(Output_Table, SeedTableNamesRawAndNormalisedMeans) {
  Json r = Json::parse(R"({
    "results": {"t": {"alias": "t"}},
    "fewshot_seed_variance": {"t": {"seeds": [1, 2, 3],
      "acc,none": {"mean": 0.4, "std": 0.05, "min": 0.35, "max": 0.45},
      "f1,none": {"mean": 0.5, "std": 0.01, "min": 0.49, "max": 0.51}}},
    "leaderboard_normalized": {"tasks": {"t": {"acc,none": {"raw": 0.41, "random_baseline": 0.25, "normalized": 21.33}}}}})");
  const std::string t = lmeval::make_seed_variance_table(r);
  EXPECT_NE(t.find("|Mean (raw)|"), std::string::npos) << t;
  EXPECT_NE(t.find("|Mean normalised (leaderboard)|"), std::string::npos) << t;
  std::istringstream in(t);
  std::string line, acc, f1;
  while (std::getline(in, line)) {
    if (line.find("|acc ") != std::string::npos) acc = line;
    if (line.find("|f1 ") != std::string::npos) f1 = line;
  }
  auto last_cell = [](const std::string& row) {
    const std::string cell = row.substr(row.rfind('|', row.size() - 2) + 1,
                                        row.size() - 2 - row.rfind('|', row.size() - 2));
    const auto a = cell.find_first_not_of(' ');
    return a == std::string::npos ? std::string() : cell.substr(a);
  };
  EXPECT_EQ(std::stod(last_cell(acc)), 20.0) << t;  // of the seeds' mean, not the first seed's 0.41
  EXPECT_EQ(last_cell(f1), "") << t;                // no baseline: empty
  r.erase("leaderboard_normalized");
  const std::string plain = lmeval::make_seed_variance_table(r);
  EXPECT_NE(plain.find("|Mean|"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("normalised"), std::string::npos);
}

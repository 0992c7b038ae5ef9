// End-to-end: every golden run of the reference (../shared/goldens/manifest.json) re-run with
// `lm-eval run --model hashfake`, results and samples compared key by key (port of
// scripts/compare_golden.py; the comparison itself is in golden_compare.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/golden_compare.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::shared_dir;
using lmeval::testing::golden::GoldenRun;

namespace {

std::vector<GoldenRun> load_runs() {
  fs::path manifest =
      shared_dir().empty() ? fs::path() : shared_dir() / "goldens" / "manifest.json";
  return lmeval::testing::golden::load_runs(manifest, "shared_absent");
}

class GoldenRunTest : public ::testing::TestWithParam<GoldenRun> {};

TEST_P(GoldenRunTest, MatchesReference) {
  LMEVAL_REQUIRE_SHARED("goldens/manifest.json");
  LMEVAL_REQUIRE_SHARED("hf_data");
  const auto& e = GetParam().entry;

  fs::path out = fs::temp_directory_path() /
                 ("lmeval_e2e_" + GetParam().label + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string cmd = lmeval::testing::golden::run_command_line(e, shared_dir() / "hf_data", out);
  auto res = lmeval::testing::run_command(cmd);
  ASSERT_EQ(res.exit_code, 0) << cmd << "\n" << res.err;

  auto diffs = lmeval::testing::golden::diff_run(e, shared_dir() / "goldens", out);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences for " << GetParam().label << ":\n"
                             << lmeval::testing::golden::first_diffs(diffs);
  if (diffs.empty()) fs::remove_all(out);
}

// Bad data (docs/tasks.md): a document a doc function cannot handle stops the run with exit 2
// and a message naming the task and the doc_id.
TEST(TaskBadData, DocFunctionErrorNamesTaskAndDoc) {
  fs::path dir = fs::temp_directory_path() / ("lmeval_bad_data_" + std::to_string(::getpid()));
  fs::path split = dir / "allenai" / "winogrande" / "winogrande_xl";
  fs::create_directories(split);
  {
    std::ofstream f(split / "validation.jsonl");
    f << R"({"sentence": "Sarah was a better surgeon than Maria so _ got the harder cases.", "option1": "Sarah", "option2": "Maria", "answer": "2"})"
      << "\n";
    f << R"({"sentence": "There is no blank here.", "option1": "a", "option2": "b", "answer": "1"})"
      << "\n";
  }
  auto res =
      lmeval::testing::run_command(lmeval::testing::lmeval_binary().string() +
                                   " run --model hashfake --tasks winogrande --data_dir " +
                                   dir.string() + " --output_path " + (dir / "out").string());
  fs::remove_all(dir);
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_NE((res.out + res.err).find("task winogrande, doc_id 1: winogrande: sentence has no '_'"),
            std::string::npos)
      << res.out << res.err;
}

INSTANTIATE_TEST_SUITE_P(Goldens, GoldenRunTest, ::testing::ValuesIn(load_runs()),
                         [](const ::testing::TestParamInfo<GoldenRun>& info) {
                           return info.param.label;
                         });

}  // namespace

// Bad input to compare / analyze / report: one clear message naming the file or argument, exit 2.
#include "lmeval/analysis/run.hpp"

#include "analysis/run_fixture.hpp"

using lmeval::testing::AnalysisRuns;

namespace {
class BadInput : public AnalysisRuns {};
}  // namespace

TEST_F(BadInput, MissingSamplesFiles) {
  for (const char* cmd : {"compare", "analyze", "report --output x.html"}) {
    auto r = lm(std::string(cmd) + " " + run("a") + " " + run("no_samples"));
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("no samples file for task 'qa_one'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("rerun `lm-eval run` with --log_samples"), std::string::npos) << r.err;
  }
}

TEST_F(BadInput, RunsOfDifferentTasks) {
  auto r = lm("compare " + run("a") + " " + run("other"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the runs share no task: model-a has qa_one, qa_two; model-b has qa_other"),
            std::string::npos)
      << r.err;
  auto r2 = lm("analyze " + run("a") + " " + run("other"));
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.err.find("share no task"), std::string::npos) << r2.err;
}

TEST_F(BadInput, CorruptResultsFile) {
  const auto good = results_file("a");
  const std::filesystem::path bad =
      dir() / ("corrupt_" + std::to_string(getpid())) / "results_2026-01-01T00-00-00.json";
  std::filesystem::create_directories(bad.parent_path());
  std::string text = lmeval::testing::read_file(good);
  std::ofstream(bad) << text.substr(0, text.size() / 2);
  auto r = lm("compare " + bad.string() + " " + run("b"));
  std::filesystem::remove_all(bad.parent_path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("corrupt JSON"), std::string::npos) << r.err;
}

TEST_F(BadInput, CorruptSamplesLine) {
  const std::filesystem::path copy = dir() / ("corrupt_samples_" + std::to_string(getpid()));
  std::filesystem::copy(results_file("a").parent_path(), copy);
  std::filesystem::path samples;
  for (const auto& e : std::filesystem::directory_iterator(copy))
    if (e.path().filename().string().starts_with("samples_qa_two")) samples = e.path();
  std::ofstream(samples, std::ios::app) << "{\"doc_id\": 3, \"doc_ha\n";
  auto r = lm("compare " + copy.string() + " " + run("b"));
  std::filesystem::remove_all(copy);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(samples.string() + ":151"), std::string::npos) << r.err;
}

TEST_F(BadInput, SingleRunGivenToAnalyze) {
  auto r = lm("analyze " + run("a"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("analyze needs two or more runs of the same tasks; got 1"),
            std::string::npos)
      << r.err;
  auto c = lm("compare " + run("a"));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("compare needs two or more runs; got 1"), std::string::npos) << c.err;
}

TEST_F(BadInput, NoSuchRun) {
  auto r = lm("compare " + run("a") + " /nonexistent/run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such file or folder: /nonexistent/run"), std::string::npos) << r.err;
  auto e = lm("compare " + run("a") + " " + dir().string() + "/tasks");
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("no results_*.json in"), std::string::npos) << e.err;
}

TEST_F(BadInput, ReportNeedsOutput) {
  auto r = lm("report " + run("a"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
}

// Runs are labelled by model name; runs of one model name are told apart by the model_args that
// differ between them, and only runs alike in those too get "#2".
TEST(RunLabels, SameModelNameToldApartByModelArgs) {
  lmeval::analysis::Run a, b, c;
  for (auto* r : {&a, &b, &c}) r->label = "llama";
  a.results["config"]["model_args"] = "pretrained=llama,dtype=float16";
  b.results["config"]["model_args"] = {{"pretrained", "llama"}, {"dtype", "bfloat16"}};
  c.results["config"]["model_args"] = "pretrained=llama,dtype=bfloat16";
  std::vector<lmeval::analysis::Run> runs = {a, b, c};
  lmeval::analysis::label_runs(runs);
  EXPECT_EQ(runs[0].label, "llama (dtype=float16)");
  EXPECT_EQ(runs[1].label, "llama (dtype=bfloat16)");
  EXPECT_EQ(runs[2].label, "llama (dtype=bfloat16)#2");
}

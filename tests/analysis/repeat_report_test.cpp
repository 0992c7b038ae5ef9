// Sampled answers (`repeats`): the run records each answer's own score in the samples
// (`repeat_scores`) only for pipelines that score one answer, and analyze/report show the
// between/within-question split of a run's scores; the figures are checked against numpy's
// (tests/stats/goldens/repeats.json, scripts/gen_repeat_goldens.py) by putting the golden score
// matrix into a real run's samples file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "lmeval/analysis/html_report.hpp"
#include "lmeval/analysis/item_report.hpp"
#include "lmeval/analysis/repeat_report.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_file;
using lmeval::testing::read_jsonl;
using lmeval::testing::run_command;

namespace {

class Repeats : public ::testing::Test {
 protected:
  static fs::path dir() {
    static const fs::path d =
        fs::temp_directory_path() / ("lmeval_repeats_" + std::to_string(getpid()));
    return d;
  }
  static void SetUpTestSuite() {
    fs::remove_all(dir());
    fs::create_directories(dir() / "tasks");
    std::ofstream data(dir() / "data.jsonl");
    for (int i = 0; i < 40; ++i)
      data << "{\"q\": \"What is " << i << " plus " << i % 7 << "?\", \"a\": \"" << i + i % 7
           << "\"}\n";
    data.close();
    const std::string head =
        "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
        (dir() / "data.jsonl").string() +
        "\noutput_type: generate_until\ntest_split: test\ndoc_to_text: \"Question: "
        "{{q}}\\nAnswer:\"\n"
        "doc_to_target: a\ngeneration_kwargs:\n  until: [\"\\n\\n\"]\n  do_sample: true\n"
        "metric_list:\n  - metric: exact_match\nmetadata:\n  version: 1.0\n";
    const std::string regex =
        "      - function: regex\n        regex_pattern: \"answer is (\\\\d+)\"\n";
    std::ofstream(dir() / "tasks" / "rep_gen.yaml")
        << "task: rep_gen\n"
        << head << "repeats: 4\nfilter_list:\n  - name: score-first\n    filter:\n"
        << regex << "      - function: take_first\n  - name: maj@4\n    filter:\n"
        << regex << "      - function: majority_vote\n      - function: take_first\n";
    std::ofstream(dir() / "tasks" / "one_gen.yaml") << "task: one_gen\n" << head;
    auto r = run_command("cd '" + dir().string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                         lmeval_binary().string() +
                         "' run --model dummy --tasks rep_gen,one_gen --include_path tasks "
                         "--output_path runs/a --log_samples --log_repeat_scores");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir()); }

  static fs::path samples(const fs::path& run, const std::string& task) {
    for (const auto& e : fs::recursive_directory_iterator(run))
      if (e.path().filename().string().starts_with("samples_" + task + "_")) return e.path();
    return {};
  }
  static const Json& golden(const std::string& name) {
    static const Json g =
        Json::parse(read_file(lmeval::testing::source_dir() / "tests/stats/goldens/repeats.json"));
    for (const auto& c : g["cases"])
      if (c["name"] == name) return c;
    throw std::runtime_error("no golden case " + name);
  }
};

}  // namespace

TEST_F(Repeats, EachAnswerScoredOnlyWherePipelineScoresOneAnswer) {
  const auto lines = read_jsonl(samples(dir() / "runs" / "a", "rep_gen"));
  ASSERT_EQ(lines.size(), 80u);  // 40 documents x 2 filters
  for (const auto& s : lines) {
    ASSERT_EQ(s["resps"][0].size(), 4u);
    if (s["filter"] == "score-first") {
      // regex + take_first: each of the 4 answers scored as if it came first; the first is the
      // logged score.
      ASSERT_TRUE(s.contains("repeat_scores")) << s.dump();
      ASSERT_EQ(s["repeat_scores"]["exact_match"].size(), 4u);
      EXPECT_EQ(s["repeat_scores"]["exact_match"][0], s["exact_match"]);
      // The record's keys are the reference's, with repeat_scores last.
      EXPECT_EQ(std::prev(s.end()).key(), "repeat_scores");
    } else {
      // majority_vote: a score of all 4 answers together, no per-answer score.
      EXPECT_EQ(s["filter"], "maj@4");
      EXPECT_FALSE(s.contains("repeat_scores"));
    }
  }
  // repeats 1: the samples are the reference's, untouched.
  for (const auto& s : read_jsonl(samples(dir() / "runs" / "a", "one_gen")))
    EXPECT_FALSE(s.contains("repeat_scores"));
}

TEST_F(Repeats, AnalyzeAndReportGiveTheDecompositionNumpyGives) {
  // Run b: run a with the golden 40 x 4 score matrix as its per-answer scores (and a second
  // few-shot seed's lines, whose scores must be ignored: the decomposition is of the first seed).
  const Json& g = golden("bernoulli_n40_k4");
  ASSERT_EQ(g["n"], 40);
  fs::remove_all(dir() / "runs" / "b");
  fs::copy(dir() / "runs" / "a", dir() / "runs" / "b", fs::copy_options::recursive);
  const fs::path file = samples(dir() / "runs" / "b", "rep_gen");
  std::string text;
  for (auto s : read_jsonl(file)) {
    if (s["filter"] == "score-first")
      s["repeat_scores"]["exact_match"] = g["x"][s["doc_id"].get<std::size_t>()];
    text += s.dump() + "\n";
  }
  std::ofstream(file) << text;
  const auto runs = lmeval::analysis::load_runs(
      {(dir() / "runs" / "a").string(), (dir() / "runs" / "b").string()});
  const auto a = lmeval::analysis::analyze_runs(runs);
  const Json j = lmeval::analysis::to_json(a);
  const Json* task = nullptr;
  for (const auto& t : j["tasks"])
    if (t["task"] == "rep_gen") task = &t;
  ASSERT_NE(task, nullptr);
  ASSERT_EQ((*task)["repeats"].size(), 2u);  // one per run: score-first only
  const Json& b = (*task)["repeats"][1];
  EXPECT_EQ(b["metric"], "exact_match,score-first");
  EXPECT_EQ(b["k"], 4);
  EXPECT_EQ(b["n"], 40);
  const double between = g["between"], within = g["within"];
  EXPECT_NEAR(b["mean"].get<double>(), g["mean"].get<double>(), 1e-12);
  EXPECT_NEAR(b["between_variance"].get<double>(), between, 1e-12);
  EXPECT_NEAR(b["within_variance"].get<double>(), within, 1e-12);
  EXPECT_NEAR(b["se"].get<double>(), g["se"].get<double>(), 1e-12);
  EXPECT_NEAR(b["se_doubled_k"].get<double>(), std::sqrt((between + within / 8) / 40), 1e-12);
  EXPECT_NEAR(b["se_infinite_k"].get<double>(), std::sqrt(between / 40), 1e-12);
  EXPECT_NE(b["advice"].get<std::string>().find("doubling K to 8"), std::string::npos)
      << b["advice"];
  // Run a: the dummy model answers alike every time (a hash of the prompt): no within variance.
  EXPECT_EQ((*task)["repeats"][0]["within_variance"].get<double>(), 0.0);
  EXPECT_NE(
      (*task)["repeats"][0]["advice"].get<std::string>().find("only more questions narrow the SE"),
      std::string::npos);

  const std::string out = lmeval::analysis::render_text(a);
  EXPECT_NE(out.find("Between-question var"), std::string::npos) << out;
  EXPECT_NE(out.find("| exact_match,score-first |   4 |  40 |"), std::string::npos) << out;

  lmeval::analysis::ReportInput in = lmeval::analysis::prepare_report(runs, {}, {});
  const std::string html = lmeval::analysis::render_html_report(in);
  EXPECT_NE(html.find("Sampled answers"), std::string::npos);
  EXPECT_NE(html.find(lmeval::analysis::repeat_advice(a.tasks[0].task == "rep_gen"
                                                          ? a.tasks[0].repeats[1].v
                                                          : a.tasks[1].repeats[1].v)
                          .substr(0, 40)),
            std::string::npos);

  // The table fits a laptop's width (the probe of html_report_test's overflow check), where
  // chromium is installed.
  auto which =
      run_command("command -v chromium || command -v chromium-browser || command -v google-chrome");
  if (which.exit_code != 0 || which.out.empty())
    GTEST_SKIP() << "chromium is not installed; the checks above still ran";
  std::string page = std::regex_replace(
      html, std::regex("<meta http-equiv=\"Content-Security-Policy\"[^>]*>"), "");
  page.replace(page.rfind("</body>"), 7, R"(<pre id="probe"></pre><script>
const out = [], width = document.documentElement.clientWidth;
if (document.documentElement.scrollWidth > width + 1) out.push('page ' + document.documentElement.scrollWidth);
for (const el of document.querySelectorAll('table, td, th, h3, p, li'))
  if (el.getBoundingClientRect().right > width + 1) out.push('right: ' + el.textContent.slice(0, 60));
document.getElementById('probe').textContent = out.join('\n') || 'FITS';
</script></body>)");
  const fs::path probe = dir() / "probe.html", profile = dir() / "chromium-profile";
  { std::ofstream(probe) << page; }
  auto c = run_command("'" + which.out.substr(0, which.out.find('\n')) +
                       "' --headless --disable-gpu --no-sandbox --user-data-dir='" +
                       profile.string() + "' --window-size=1100,3000 --dump-dom 'file://" +
                       probe.string() + "' 2>/dev/null");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("<pre id=\"probe\">FITS</pre>"), std::string::npos)
      << c.out.substr(c.out.find("<pre id=\"probe\">"), 600);
}

TEST_F(Repeats, OnlyTheFirstFewshotSeedsLinesCount) {
  const Json& g = golden("normal_n30_k5");
  fs::remove_all(dir() / "runs" / "c");
  fs::copy(dir() / "runs" / "a", dir() / "runs" / "c", fs::copy_options::recursive);
  const fs::path file = samples(dir() / "runs" / "c", "rep_gen");
  std::string text;
  for (int seed : {1234, 7})
    for (auto s : read_jsonl(file)) {
      const std::size_t d = s["doc_id"].get<std::size_t>();
      if (s["filter"] != "score-first" || d >= 30) continue;
      s["fewshot_seed"] = seed;
      // The second seed's answers are nonsense that would change every figure.
      s["repeat_scores"]["exact_match"] =
          seed == 1234 ? g["x"][d] : Json::array({100.0, -100.0, 3.0, 0.0, 9.0});
      text += s.dump() + "\n";
    }
  std::ofstream(file) << text;
  const auto runs = lmeval::analysis::load_runs({(dir() / "runs" / "c").string()});
  const auto sums = lmeval::analysis::repeat_summaries(runs, "rep_gen");
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].v.n, 30u);
  EXPECT_EQ(sums[0].v.k, 5u);
  EXPECT_NEAR(sums[0].v.between, g["between"].get<double>(), 1e-12);
  EXPECT_NEAR(sums[0].v.within, g["within"].get<double>(), 1e-12);
}

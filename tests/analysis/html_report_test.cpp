// `lm-eval report`: one self-contained HTML file (nothing fetched; one inline script, the sample
// browser's), rendered by headless Chromium to PNG without console errors. Skips the render where
// chromium is not installed; the screenshots stay in the build's test_artifacts/ folder.
#include "lmeval/analysis/html_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <tuple>

#include "analysis/run_fixture.hpp"

using lmeval::testing::AnalysisRuns;
using lmeval::testing::read_file;
using lmeval::testing::run_command;

namespace {
class Report : public AnalysisRuns {
 protected:
  std::filesystem::path html_ = dir() / ("report_" + std::to_string(getpid()) + ".html");
  void TearDown() override { std::filesystem::remove(html_); }
};

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    auto r = run_command(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return {};
}
}  // namespace

TEST_F(Report, SelfContainedHtml) {
  auto r =
      lm("report " + run("a") + " " + run("b") + " " + run("c") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string h = read_file(html_);
  EXPECT_TRUE(h.starts_with("<!DOCTYPE html>"));
  // Scripts: the sample browser's data block and its inline code, nothing loaded.
  std::size_t scripts = 0;
  for (std::size_t at = h.find("<script"); at != std::string::npos; at = h.find("<script", at + 1))
    ++scripts;
  EXPECT_EQ(scripts, 2u);
  EXPECT_EQ(h.find("<script src"), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_EQ(h.find("@import"), std::string::npos);
  EXPECT_EQ(h.find("url("), std::string::npos);
  // The only URL is the SVG namespace name, which is never fetched.
  std::string rest = std::regex_replace(h, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(rest.find("http://"), std::string::npos);
  EXPECT_EQ(rest.find("https://"), std::string::npos);
  for (const char* part :
       {"<h2 id=\"qa_one\">", "<h2 id=\"qa_group\">", "<svg", "Paired differences", "Item analysis",
        "holds in (of 1000 item resamples)", "Configuration", "model-a", "model-b", "model-c",
        "&quot;salt&quot;: &quot;c&quot;"})
    EXPECT_NE(h.find(part), std::string::npos) << part;
}

TEST_F(Report, RefusedComparisonIsShownNotFatal) {
  auto r = lm("report " + run("a") + " " + run("b_fewshot") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string h = read_file(html_);
  EXPECT_NE(h.find("Not compared with run 1"), std::string::npos);
  EXPECT_NE(h.find("num_fewshot: 0 vs 1"), std::string::npos);
}

TEST_F(Report, RendersInHeadlessChromiumWithoutConsoleErrors) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP()
        << "chromium is not installed (apt-get install chromium); the HTML checks above still ran";
  auto r =
      lm("report " + run("a") + " " + run("b") + " " + run("c") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::filesystem::path png = html_.string() + ".png", profile = html_.string() + ".profile";
  auto c = run_command(
      "'" + chromium + "' --headless --disable-gpu --no-sandbox --user-data-dir='" +
      profile.string() + "' --enable-logging=stderr --v=0 --window-size=1100,3000 --screenshot='" +
      png.string() + "' 'file://" + html_.string() + "'");
  std::filesystem::remove_all(profile);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << c.err;
  EXPECT_GT(std::filesystem::file_size(png), 20000u);  // a page with content, not a blank image
  const std::string png_bytes = read_file(png);
  EXPECT_EQ(png_bytes.substr(1, 3), "PNG");
  std::filesystem::remove(png);
  // Chromium logs every console message (errors, CSP violations, failed loads) as ":CONSOLE".
  std::string all = c.out + c.err;
  EXPECT_EQ(all.find(":CONSOLE"), std::string::npos) << all;
  EXPECT_EQ(all.find("Refused to"), std::string::npos) << all;
}

// The summary is there and nothing overflows at a laptop's width: a test-only copy of the page,
// without its Content-Security-Policy, gets a script that measures the layout and writes what
// overflows into the DOM, which headless Chromium dumps.
TEST_F(Report, SummaryPresentAndNothingOverflowsInHeadlessChromium) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  auto r =
      lm("report " + run("a") + " " + run("b") + " " + run("c") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = read_file(html_);
  page = std::regex_replace(page, std::regex("<meta http-equiv=\"Content-Security-Policy\"[^>]*>"),
                            "");
  const std::string probe = R"(<pre id="probe"></pre><script>
const out = [];
const width = document.documentElement.clientWidth;
if (document.documentElement.scrollWidth > width + 1) out.push('page ' + document.documentElement.scrollWidth + ' > ' + width);
for (const el of document.querySelectorAll('table, td, th, svg, h1, h2, h3, p')) {
  const box = el.getBoundingClientRect();
  if (box.right > width + 1) out.push(el.tagName + ' right ' + Math.round(box.right) + ': ' + el.textContent.slice(0, 60));
  if ((el.tagName === 'TD' || el.tagName === 'TH') && el.scrollWidth > el.clientWidth + 1)
    out.push('cell ' + el.scrollWidth + ' > ' + el.clientWidth + ': ' + el.textContent.slice(0, 60));
}
const summary = document.querySelector('h2#summary + table.summary');
out.push(summary ? 'SUMMARY rows ' + summary.rows.length : 'NO SUMMARY');
document.getElementById('probe').textContent = out.join('\n');
</script></body>)";
  page.replace(page.rfind("</body>"), 7, probe);
  const std::filesystem::path probe_html = html_.string() + ".probe.html",
                              profile = html_.string() + ".profile2";
  { std::ofstream(probe_html) << page; }
  auto c =
      run_command("'" + chromium + "' --headless --disable-gpu --no-sandbox --user-data-dir='" +
                  profile.string() + "' --window-size=1100,3000 --dump-dom 'file://" +
                  probe_html.string() + "' 2>/dev/null");
  std::filesystem::remove_all(profile);
  std::filesystem::remove(probe_html);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto start = c.out.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << c.out.substr(0, 500);
  const std::string found = c.out.substr(start, c.out.find("</pre>", start) - start);
  // Summary: a header row and one row per task (qa_group, qa_one, qa_two).
  EXPECT_NE(found.find("SUMMARY rows 4"), std::string::npos) << found;
  EXPECT_EQ(found.find("right "), std::string::npos) << found;
  EXPECT_EQ(found.find("cell "), std::string::npos) << found;
  EXPECT_EQ(found.find("page "), std::string::npos) << found;
}

TEST_F(Report, SummaryMarksTheBestOnlyWhereDistinguishable) {
  auto runs = lmeval::analysis::load_runs({run("a"), run("a_again")});
  const std::string h = lmeval::analysis::render_html_report(
      lmeval::analysis::prepare_report(std::move(runs), {}, {}));
  // Identical runs: nothing is marked best.
  EXPECT_NE(h.find("<h2 id=\"summary\">Summary</h2>"), std::string::npos);
  EXPECT_EQ(h.find(" best\">"), std::string::npos);
  EXPECT_NE(h.find("not distinguishable"), std::string::npos);
  // The chance line on the score charts, and ticks with only the decimals their spacing needs.
  EXPECT_NE(h.find("class=\"chance\""), std::string::npos);
  EXPECT_NE(h.find(">chance 0.25</text>"), std::string::npos);
  EXPECT_NE(h.find(">0.2</text>"), std::string::npos);
  // Two runs: the item analysis carries its caveat.
  EXPECT_NE(h.find("Only 2 runs (fewer than 5)"), std::string::npos);
}

// A seed run's report shows the seed mean compare uses (and its normalised value), labelled so.
TEST_F(Report, SeedRunsShowTheSeedMean) {
  auto runs = lmeval::analysis::load_runs({run("seeds_a"), run("seeds_b")});
  const auto sv = runs[0].results["fewshot_seed_variance"]["qa_one"]["acc,none"];
  const std::string h = lmeval::analysis::render_html_report(
      lmeval::analysis::prepare_report(std::move(runs), {}, {}));
  char cell[200];
  std::snprintf(cell, sizeof cell, "<td class=\"num\">%.4f</td><td>mean of 3 few-shot seeds</td>",
                sv["mean"].get<double>());
  EXPECT_NE(h.find(cell), std::string::npos) << cell;
  std::snprintf(cell, sizeof cell, "(raw %.4f, random baseline 0.2500)", sv["mean"].get<double>());
  EXPECT_NE(h.find(cell), std::string::npos) << cell;
  EXPECT_NE(h.find("(items and seeds)"), std::string::npos);
  EXPECT_NE(h.find("<sup>s</sup>"), std::string::npos);
}

TEST_F(Report, SeedWhiskersAndNormalisedScores) {
  auto runs = lmeval::analysis::load_runs({run("a"), run("b")});
  // The shape `--fewshot_seeds` runs write (docs/statistics.md); values made up for the drawing.
  runs[0].results["fewshot_seed_variance"] = {{"qa_one",
                                               {{"seeds", {1, 2, 3}},
                                                {"acc,none",
                                                 {{"mean", 0.25},
                                                  {"std", 0.02},
                                                  {"min", 0.23},
                                                  {"max", 0.27},
                                                  {"values", {0.23, 0.25, 0.27}}}}}}};
  const std::string h = lmeval::analysis::render_html_report(
      lmeval::analysis::prepare_report(std::move(runs), {}, {}));
  EXPECT_NE(h.find("0.2500 ± 0.0200 (0.2300–0.2700; 3 seeds)"), std::string::npos);
  EXPECT_NE(h.find("stroke=\"#888\""), std::string::npos);  // the whisker
  EXPECT_NE(h.find("(raw "), std::string::npos);            // leaderboard_normalized beside raw
}

// Raw and leaderboard-normalised side by side, each named: per run the normalised score with its
// raw score and baseline, and per paired difference the normalised one. Four choices per fixture
// question: baseline 0.25, normalised = max(0, (raw - 0.25) / 0.75) * 100, raw from the samples.
TEST_F(Report, RawAndNormalisedScoresAreNamed) {
  auto runs = lmeval::analysis::load_runs({run("a"), run("b")});
  const std::string h = lmeval::analysis::render_html_report(
      lmeval::analysis::prepare_report(std::move(runs), {}, {}));
  EXPECT_NE(h.find("<th>raw score</th>"), std::string::npos);
  EXPECT_NE(h.find("<th>normalised (leaderboard, 0–100)</th>"), std::string::npos);
  EXPECT_NE(h.find("<th>raw difference</th>"), std::string::npos);
  EXPECT_NE(h.find("<th>normalised (leaderboard)</th>"), std::string::npos);
  auto mean = [](const std::map<std::string, double>& m) {
    double s = 0;
    for (const auto& [k, v] : m) s += v;
    return s / static_cast<double>(m.size());
  };
  auto lb = [](double raw) { return std::max(0.0, (raw - 0.25) / 0.75) * 100; };
  const double ra = mean(item_scores("a", "qa_one")), rb = mean(item_scores("b", "qa_one"));
  char cell[160];
  std::snprintf(cell, sizeof cell,
                "%.2f <span class=\"note\">(raw %.4f, random baseline 0.2500)</span>", lb(rb), rb);
  EXPECT_NE(h.find(cell), std::string::npos) << cell;
  std::snprintf(cell, sizeof cell,
                "<td class=\"num\">%+.2f <span class=\"note\">(%.2f → %.2f)</span></td>",
                lb(rb) - lb(ra), lb(ra), lb(rb));
  EXPECT_NE(h.find(cell), std::string::npos) << cell;
}

// A group the leaderboard scores by its own rule (no single baseline) shows the rule's number and
// names it.
TEST_F(Report, LeaderboardRuleForAGroupIsNamed) {
  auto runs = lmeval::analysis::load_runs({run("a"), run("b")});
  ASSERT_TRUE(runs[0].results["results"].contains("qa_group"));
  runs[0].results["leaderboard_normalized"]["leaderboard"]["qa_group"] = {
      {"normalized", 7.5},
      {"metric", "acc,none"},
      {"rule", "unweighted mean of normalised subtask acc"}};
  const double raw = runs[0].results["results"]["qa_group"]["acc,none"].get<double>();
  const std::string h = lmeval::analysis::render_html_report(
      lmeval::analysis::prepare_report(std::move(runs), {}, {}));
  char cell[200];
  std::snprintf(cell, sizeof cell,
                "7.50 <span class=\"note\">(raw %.4f, the leaderboard's rule: unweighted mean of "
                "normalised subtask acc)</span>",
                raw);
  EXPECT_NE(h.find(cell), std::string::npos) << cell;
}

// Plots carry axis titles and counts; runs are labelled by model name; the sample browser holds
// every document of every task with prompt, target, answers and scores.
TEST_F(Report, AxesCountsLabelsAndSampleBrowser) {
  auto r =
      lm("report " + run("a") + " " + run("b") + " " + run("c") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string h = read_file(html_);
  for (const char* part :
       {"acc (none), 95% interval", "difference in acc (B − A), 95% interval", "n = 150",
        "inter-item correlation over runs (r)", "item pairs", "<h2 id=\"samples\">",
        "id=\"sb-wrong\"", "id=\"sb-diff\"", "id=\"sb-q\"", "model-b − model-a"})
    EXPECT_NE(h.find(part), std::string::npos) << part;
  const auto start = h.find("<script type=\"application/json\" id=\"sb-data\">");
  ASSERT_NE(start, std::string::npos);
  const auto body = start + std::string("<script type=\"application/json\" id=\"sb-data\">").size();
  const auto data = nlohmann::json::parse(h.substr(body, h.find("</script>", body) - body));
  EXPECT_EQ(data["runs"], (nlohmann::json{"model-a", "model-b", "model-c"}));
  for (const auto& t : data["tasks"]) {
    ASSERT_EQ(t["items"].size(), 150u) << t["name"];
    // Every document as the samples file has it: prompt, target and score of run A.
    const auto scores = item_scores("a", t["name"].get<std::string>());
    std::map<long long, double> by_id;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir() / "runs/a"))
      if (e.path().filename().string().starts_with("samples_" + t["name"].get<std::string>() +
                                                   "_")) {
        std::ifstream in(e.path());
        for (std::string line; std::getline(in, line);) {
          auto j = nlohmann::json::parse(line);
          by_id[j["doc_id"].get<long long>()] = j["acc"].get<double>();
        }
      }
    const auto& first = t["items"][0];
    EXPECT_EQ(first["by"][0]["prompt"].get<std::string>().rfind("Q: ", 0), 0u);
    EXPECT_EQ(first["choices"].size(), 4u);
    EXPECT_EQ(first["by"][0]["filtered"]["none"].get<std::string>().rfind("choice ", 0), 0u);
    for (const auto& it : t["items"])
      EXPECT_EQ(it["by"][0]["scores"][0].get<double>(), by_id.at(it["id"].get<long long>()));
    EXPECT_EQ(scores.size(), 150u);
  }
}

// A dummy model has no name argument: its random 8-character model_name gives way to the model
// type.
TEST(ReportLabels, RandomModelNamesGiveWayToTheModelType) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lmeval_label_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json res = {{"results", {{"t", {{"acc,none", 1.0}}}}},
                                {"configs", {{"t", {{"task", "t"}}}}},
                                {"model_name", "k3j9x0qa"},
                                {"config", {{"model", "dummy"}, {"model_args", "salt=1"}}}};
  std::ofstream(dir / "results_2026-01-01T00-00-00.json") << res.dump();
  std::ofstream(dir / "samples_t_2026-01-01T00-00-00.jsonl")
      << R"({"doc_id": 0, "doc_hash": "h", "metrics": ["acc"], "acc": 1.0})"
      << "\n";
  auto loaded = lmeval::analysis::load_run(dir.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(loaded.label, "dummy");
}

// 1,000 documents in headless Chromium: only one page of rows is built, the filters and the
// search answer at once, and the screenshots (top of the report, the sample browser) are kept.
TEST_F(Report, SampleBrowserOnAThousandDocumentsInHeadlessChromium) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  auto r = lm("report " + run("big_a") + " " + run("big_b") + " --output " + html_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::filesystem::path artefacts =
      lmeval::testing::lmeval_binary().parent_path() / "test_artifacts";
  std::filesystem::create_directories(artefacts);
  const std::filesystem::path profile = html_.string() + ".profile3";
  // The sample browser alone: a copy of the page without the sections above it.
  {
    std::string page = read_file(html_);
    const auto from = page.find("<h2>Runs</h2>"), to = page.find("<h2 id=\"samples\">");
    ASSERT_TRUE(from != std::string::npos && to != std::string::npos);
    page.erase(from, to - from);
    std::ofstream(html_.string() + ".samples.html") << page;
  }
  for (const auto& [name, anchor, size] :
       {std::tuple{"report_top.png", "", "1100,2400"},
        std::tuple{"report_samples.png", ".samples.html", "1100,1500"}}) {
    auto c = run_command(
        "'" + chromium + "' --headless --disable-gpu --no-sandbox --user-data-dir='" +
        profile.string() + "' --window-size=" + size + " --screenshot='" +
        (artefacts / name).string() + "' 'file://" + html_.string() + anchor + "' 2>&1");
    ASSERT_EQ(c.exit_code, 0) << c.out;
    EXPECT_GT(std::filesystem::file_size(artefacts / name), 20000u) << name;
    EXPECT_EQ(c.out.find(":CONSOLE"), std::string::npos) << c.out;
  }
  std::filesystem::remove(html_.string() + ".samples.html");
  std::string page = read_file(html_);
  page = std::regex_replace(page, std::regex("<meta http-equiv=\"Content-Security-Policy\"[^>]*>"),
                            "");
  const std::string probe = R"(<pre id="probe"></pre><script>
const out = [];
const rows = () => document.querySelectorAll('#sb-rows tr').length;
out.push('ROWS ' + rows());
out.push('COUNT ' + document.getElementById('sb-count').textContent);
const t0 = performance.now();
const w = document.getElementById('sb-wrong'); w.checked = true; w.dispatchEvent(new Event('change'));
out.push('WRONG ' + document.getElementById('sb-count').textContent);
const d = document.getElementById('sb-diff'); d.checked = true; d.dispatchEvent(new Event('change'));
out.push('DIFF ' + document.getElementById('sb-count').textContent);
w.checked = false; d.checked = false; w.dispatchEvent(new Event('change'));
const q = document.getElementById('sb-q'); q.value = 'big question 777?'; q.dispatchEvent(new Event('input'));
out.push('SEARCH ' + rows() + ' ' + document.querySelector('#sb-rows td').textContent);
out.push('MS ' + Math.round(performance.now() - t0));
document.getElementById('probe').textContent = out.join('\n');
</script></body>)";
  page.replace(page.rfind("</body>"), 7, probe);
  const std::filesystem::path probe_html = html_.string() + ".probe3.html";
  { std::ofstream(probe_html) << page; }
  auto c =
      run_command("'" + chromium + "' --headless --disable-gpu --no-sandbox --user-data-dir='" +
                  profile.string() + "' --window-size=1100,1500 --dump-dom 'file://" +
                  probe_html.string() + "' 2>/dev/null");
  std::filesystem::remove_all(profile);
  std::filesystem::remove(probe_html);
  ASSERT_EQ(c.exit_code, 0);
  const auto start = c.out.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << c.out.substr(0, 500);
  const std::string found = c.out.substr(start, c.out.find("</pre>", start) - start);
  EXPECT_NE(found.find("ROWS 25"), std::string::npos) << found;
  EXPECT_NE(found.find("of 1000 matching (1000 in qa_big)"), std::string::npos) << found;
  EXPECT_NE(found.find("SEARCH 1 777"), std::string::npos) << found;
  // Wrong only keeps fewer than all, differs keeps fewer still (or as many).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(found, m, std::regex("WRONG documents \\S+ of (\\d+) matching")))
      << found;
  const int wrong = std::stoi(m[1]);
  EXPECT_GT(wrong, 0);
  EXPECT_LT(wrong, 1000);
  ASSERT_TRUE(std::regex_search(found, m, std::regex("DIFF documents \\S+ of (\\d+) matching")))
      << found;
  EXPECT_LE(std::stoi(m[1]), wrong);
  ASSERT_TRUE(std::regex_search(found, m, std::regex("MS (\\d+)"))) << found;
  EXPECT_LT(std::stoi(m[1]), 1000) << "four re-renders over 1,000 documents took " << m[1] << " ms";
}

// `!function`s with no C++ port run in the embedded Python (liblmeval_python.so): the fixture task
// folder tests/fixtures/python_tasks (its own utils.py: process_docs with Dataset.filter/map,
// doc_to_text, doc_to_choice (one sorting its document in place), doc_to_target, process_results,
// an aggregation) gives the requests, samples and results the reference gives on it (goldens by
// scripts/gen_python_task_goldens.sh);
// Python exceptions, a Python of another version and a build without the plugin are exit 2 with
// a message naming what to do. Skipped, saying why, without the plugin or a usable environment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/golden_compare.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::run_command;
using lmeval::testing::source_dir;
using lmeval::testing::golden::GoldenRun;
using Json = lmeval::testing::golden::Json;

namespace {

fs::path fixture() { return source_dir() / "tests" / "fixtures" / "python_tasks"; }
fs::path plugin() { return lmeval_binary().parent_path() / "liblmeval_python.so"; }
std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// The environment Python task code runs in here: $LMEVAL_TEST_VENV, $VIRTUAL_ENV, the repo's
// .venv-standin (scripts/gen_standin_goldens.sh) or a venv-ref beside the repo; usable when its
// python imports datasets and is the plugin's version. Empty, with *why, when there is none.
fs::path python_env(std::string* why) {
  std::vector<fs::path> candidates;
  for (const char* var : {"LMEVAL_TEST_VENV", "VIRTUAL_ENV"})
    if (const char* v = std::getenv(var); v && *v) candidates.emplace_back(v);
  candidates.push_back(source_dir() / ".venv-standin");
  candidates.push_back(source_dir().parent_path() / "venv-ref");
  if (!fs::exists(plugin())) {
    *why = plugin().string() + " was not built (LMEVAL_WITH_PYTHON off or no python3-dev)";
    return {};
  }
  for (const auto& c : candidates) {
    if (!fs::exists(c / "bin" / "python3")) continue;
    auto r = run_command(quoted(c / "bin" / "python3") +
                         " -c 'import datasets, sys; print(sys.version_info[1])' 2>/dev/null");
    if (r.exit_code == 0) return c;
  }
  *why =
      "no Python environment with `datasets` (set LMEVAL_TEST_VENV, or make .venv-standin with "
      "scripts/gen_standin_goldens.sh)";
  return {};
}

// NOLINTBEGIN(bugprone-macro-parentheses): the macro declares `var`, which cannot be parenthesised.
#define REQUIRE_PYTHON_ENV(var)           \
  std::string why_;                       \
  const fs::path var = python_env(&why_); \
  if (var.empty()) GTEST_SKIP() << why_;
// NOLINTEND(bugprone-macro-parentheses)

std::vector<GoldenRun> load_runs() {
  return lmeval::testing::golden::load_runs(fixture() / "goldens" / "manifest.json",
                                            "manifest_absent");
}

fs::path scratch(const std::string& name) {
  fs::path d =
      fs::temp_directory_path() / ("lmeval_python_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

class PythonTaskGoldenTest : public ::testing::TestWithParam<GoldenRun> {};

// Requests in the order the model receives them, results and samples equal the reference's.
TEST_P(PythonTaskGoldenTest, MatchesReference) {
  const auto& e = GetParam().entry;
  ASSERT_FALSE(e.is_null()) << "no " << fixture() / "goldens" / "manifest.json";
  REQUIRE_PYTHON_ENV(env);
  fs::path out = scratch(GetParam().label);
  fs::path rec = out / "requests.jsonl";
  std::string cmd = "VIRTUAL_ENV=" + quoted(env) + " LMEVAL_RECORD_REQUESTS=" + quoted(rec) + " " +
                    lmeval::testing::golden::run_command_line(e, fixture() / "data", out / "run") +
                    " --include_path " + quoted(fixture() / "tasks");
  auto res = run_command(cmd);
  ASSERT_EQ(res.exit_code, 0) << cmd << "\n" << res.err;
  auto diffs = lmeval::testing::golden::diff_run(e, fixture() / "goldens", out / "run");
  size_t compared = 0;
  for (auto& d : lmeval::testing::golden::diff_recorded_requests(
           rec, fixture() / "goldens" / e.at("requests").get<std::string>(), &compared))
    diffs.push_back("recorded requests: " + d);
  EXPECT_EQ(compared, e.at("requests_kept").get<size_t>());
  for (const auto& d : diffs) ADD_FAILURE() << d;
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Fixture, PythonTaskGoldenTest, ::testing::ValuesIn(load_runs()),
                         [](const auto& info) { return info.param.label; });

// One command, seven tasks drawing from generators in their process_docs (the fixture's
// random_draws.py: the global `random`, a module's random.Random shared by two tasks, numpy's
// global generator), the reference's leaderboard_gpqa_diamond (lm-eval's C++ port, drawing from
// the same global random) and gpqa_diamond_zeroshot (Python), with no model_args (the reference's
// tracker draws the model name from the global random), and py_uneven_metrics, whose
// process_results gives other keys for other documents (sample_len is the largest count): the
// requests, samples (documents as each re-run of process_docs left them) and results equal the
// reference's (scripts/gen_random_batch_goldens.py). Needs lm_eval and numpy in the environment
// and ../shared's GPQA rows.
TEST(PythonFunctions, GeneratorDrawsAcrossOneCommandMatchReference) {
  REQUIRE_PYTHON_ENV(env);
  if (run_command(quoted(env / "bin" / "python3") + " -c 'import lm_eval, numpy' 2>/dev/null")
          .exit_code != 0)
    GTEST_SKIP() << env << " has no lm_eval or numpy";
  const fs::path gpqa = lmeval::testing::shared_dir() / "hf_data" / "Idavidrein";
  if (lmeval::testing::shared_dir().empty() || !fs::exists(gpqa))
    GTEST_SKIP() << "no ../shared/hf_data/Idavidrein";
  const fs::path goldens = fixture() / "goldens_random";
  const auto runs = lmeval::testing::golden::load_runs(goldens / "manifest.json", "absent");
  ASSERT_EQ(runs.size(), 1u);
  const auto& e = runs[0].entry;
  ASSERT_FALSE(e.is_null()) << goldens / "manifest.json";
  fs::path out = scratch("random_batch");
  fs::create_directories(out / "data");
  fs::create_directory_symlink(fixture() / "data" / "lmeval-fixtures",
                               out / "data" / "lmeval-fixtures");
  fs::create_directory_symlink(gpqa, out / "data" / "Idavidrein");
  fs::path rec = out / "requests.jsonl";
  std::string cmd = "cd " + quoted(lmeval::testing::source_dir()) +
                    " && VIRTUAL_ENV=" + quoted(env) + " LMEVAL_RECORD_REQUESTS=" + quoted(rec) +
                    " " + quoted(lmeval_binary()) + " run --model hashfake --tasks " +
                    e.at("run").get<std::string>() + " --limit " +
                    std::to_string(e.at("limit").get<int>()) + " --data_dir " +
                    quoted(out / "data") + " --log_samples --output_path " + quoted(out / "run") +
                    " --include_path tests/fixtures/python_tasks/tasks";
  auto res = run_command(cmd);
  ASSERT_EQ(res.exit_code, 0) << cmd << "\n" << res.err;
  auto diffs = lmeval::testing::golden::diff_run(e, goldens, out / "run");
  size_t compared = 0;
  for (auto& d : lmeval::testing::golden::diff_recorded_requests(
           rec, goldens / e.at("requests").get<std::string>(), &compared))
    diffs.push_back("recorded requests: " + d);
  EXPECT_EQ(compared, e.at("requests_kept").get<size_t>());
  for (const auto& d : diffs) ADD_FAILURE() << d;
  fs::remove_all(out);
}

// A task folder whose helpers raise: `dir` holds utils.py and one YAML per hook.
fs::path raising_tasks() {
  fs::path d = scratch("raising");
  std::ofstream(d / "utils.py") << "def doc_to_text(doc):\n"
                                   "    return doc['missing']\n"
                                   "\n"
                                   "def process_docs(dataset):\n"
                                   "    return dataset.map(lambda doc: {'x': 1 / 0})\n";
  const std::string head =
      "dataset_path: lmeval-fixtures/py_helpers\ntest_split: test\noutput_type: loglikelihood\n"
      "doc_to_target: ' a'\n";
  std::ofstream(d / "text.yaml") << "task: raises_in_doc_to_text\n"
                                 << head << "doc_to_text: !function utils.doc_to_text\n";
  std::ofstream(d / "docs.yaml") << "task: raises_in_process_docs\n"
                                 << head << "doc_to_text: q\n"
                                 << "process_docs: !function utils.process_docs\n";
  return d;
}

std::string run_tasks(const fs::path& dir, const std::string& task, const std::string& env) {
  return "cd " + quoted(dir) + " && " + env + " " + quoted(lmeval_binary()) +
         " run --model dummy --tasks " + task + " --include_path . --data_dir " +
         quoted(fixture() / "data");
}

// The run stops with exit 2 naming the task, the YAML file and line of the `!function`, the
// exception and the traceback's last frame.
TEST(PythonFunctions, ExceptionNamesTaskYamlLineAndLastFrame) {
  REQUIRE_PYTHON_ENV(env);
  fs::path dir = raising_tasks();
  auto r = run_command(run_tasks(dir, "raises_in_doc_to_text", "VIRTUAL_ENV=" + quoted(env)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("text.yaml:6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task raises_in_doc_to_text"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("raised KeyError: 'missing'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("utils.py, line 2, in doc_to_text: return doc['missing']"),
            std::string::npos)
      << r.err;

  r = run_command(run_tasks(dir, "raises_in_process_docs", "VIRTUAL_ENV=" + quoted(env)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("docs.yaml:7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task raises_in_process_docs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ZeroDivisionError: division by zero"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("utils.py, line 5, in <lambda>"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// An environment whose Python is another version than the embedded libpython: exit 2 saying so,
// before the interpreter starts (the environment's python is a stand-in reporting 3.99).
TEST(PythonFunctions, OtherPythonVersionIsRefused) {
  if (!fs::exists(plugin())) GTEST_SKIP() << plugin() << " was not built";
  fs::path venv = scratch("venv399");
  fs::create_directories(venv / "bin");
  {
    std::ofstream py(venv / "bin" / "python3");
    py << "#!/bin/sh\n"
          "echo '{\"executable\": \""
       << (venv / "bin" / "python3").string()
       << "\", \"prefix\": \"/x\", \"exec_prefix\": \"/x\", \"path\": [], \"stdlib\": [], "
          "\"version\": [3, 99]}'\n";
  }
  fs::permissions(venv / "bin" / "python3", fs::perms::owner_all);
  auto r = run_command("cd " + quoted(fixture() / "tasks") + " && VIRTUAL_ENV=" + quoted(venv) +
                       " " + quoted(lmeval_binary()) +
                       " run --model dummy --tasks py_helpers_mc --include_path . --data_dir " +
                       quoted(fixture() / "data"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("which is Python 3.99, but this lm-eval embeds Python 3."),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("py_helpers_mc.yaml:5"), std::string::npos) << r.err;
  fs::remove_all(venv);
}

// Without the plugin, validate names each function that needs Python and how to enable it.
TEST(PythonFunctions, ValidateWithoutPluginSaysHowToEnable) {
  fs::path empty = scratch("noplugin");
  auto r = run_command("cd " + quoted(fixture() / "tasks") +
                       " && LMEVAL_PLUGIN_DIR=" + quoted(empty) + " " + quoted(lmeval_binary()) +
                       " validate --tasks py_helpers_gen --include_path . --data_dir " +
                       quoted(fixture() / "data"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("`!function utils.process_docs_gen` needs Python"), std::string::npos) << all;
  EXPECT_NE(all.find("py_helpers_gen.yaml:5"), std::string::npos) << all;
  EXPECT_NE(all.find("python3-dev and pybind11-dev"), std::string::npos) << all;
  EXPECT_NE(all.find("-DLMEVAL_WITH_PYTHON"), std::string::npos) << all;
  fs::remove_all(empty);
}

// With the plugin and an environment, validate imports the functions: the fixture passes.
TEST(PythonFunctions, ValidatePassesWithPython) {
  REQUIRE_PYTHON_ENV(env);
  auto r = run_command("cd " + quoted(fixture() / "tasks") + " && VIRTUAL_ENV=" + quoted(env) +
                       " " + quoted(lmeval_binary()) +
                       " validate --tasks py_helpers_mc,py_helpers_gen,py_helpers_ll "
                       "--include_path . --data_dir " +
                       quoted(fixture() / "data"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace

namespace {

// bbh's filter classes (`function: !function utils.MultiChoiceRegexFilter`) have ports registered
// as filters for the reference's exact utils.py: validate accepts them (they were refused as
// unknown task functions), with the reference's own task folder of the environment.
TEST(PythonFunctions, ReferenceFilterClassPortsValidate) {
  REQUIRE_PYTHON_ENV(env);
  auto where = run_command(quoted(env / "bin" / "python3") +
                           " -c 'import lm_eval, os; print(os.path.dirname(lm_eval.__file__))' "
                           "2>/dev/null");
  if (where.exit_code != 0) GTEST_SKIP() << "the environment has no lm_eval package";
  std::string root = where.out.substr(0, where.out.find('\n')) + "/tasks";
  auto r =
      run_command("HF_HUB_OFFLINE=1 VIRTUAL_ENV=" + quoted(env) + " " + quoted(lmeval_binary()) +
                  " validate --include_path " + quoted(fs::path(root)) +
                  " --tasks bbh_zeroshot_date_understanding,bbh_cot_zeroshot_word_sorting");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace

namespace {

// An `evaluate` metric module (a local script, so no network): `evaluate.load(path)` gives it.
void write_evaluate_metric(const fs::path& dir, const std::string& name) {
  fs::create_directories(dir / name);
  std::ofstream(dir / name / (name + ".py"))
      << "import datasets\n"
         "import evaluate\n"
         "class M(evaluate.Metric):\n"
         "    def _info(self):\n"
         "        return evaluate.MetricInfo(description='', citation='', inputs_description='',\n"
         "            features=datasets.Features({'predictions': datasets.Value('string'),\n"
         "                                        'references': datasets.Value('string')}))\n"
         "    def _compute(self, predictions, references, scale=1):\n"
         "        p, r = set(predictions[0].split()), set(references[0].split())\n"
         "        return {'"
      << name << "': scale * len(p | r) + len(predictions[0])}\n";
}

// `hf_evaluate: true`, and a metric name the registry lacks, go through the `evaluate` package in
// generate_until tasks, as the reference's get_metric does: each document's values equal what
// evaluate's own compute gives on the sample's target and response (computed here by evaluate).
TEST(PythonFunctions, EvaluatePackageMetrics) {
  REQUIRE_PYTHON_ENV(env);
  if (run_command(quoted(env / "bin" / "python3") + " -c 'import evaluate' 2>/dev/null")
          .exit_code != 0)
    GTEST_SKIP() << "the environment has no `evaluate` package";
  fs::path dir = scratch("evaluate");
  write_evaluate_metric(dir, "span_a");
  write_evaluate_metric(dir, "span_b");
  std::ofstream(dir / "t.yaml") << "task: evaluate_metrics\n"
                                   "dataset_path: lmeval-fixtures/py_helpers\n"
                                   "test_split: test\n"
                                   "output_type: generate_until\n"
                                   "doc_to_text: 'Q: {{question}}\\nA:'\n"
                                   "doc_to_target: '{{choices[answer]}} sky'\n"
                                   "generation_kwargs: {until: ['\\n'], max_gen_toks: 8}\n"
                                   "metric_list:\n"
                                   "  - metric: "
                                << (dir / "span_a").string()
                                << "\n"
                                   "    aggregation: mean\n"
                                   "    higher_is_better: true\n"
                                   "    hf_evaluate: true\n"
                                   "    scale: 3\n"
                                   "  - metric: "
                                << (dir / "span_b").string()
                                << "\n"
                                   "    aggregation: mean\n"
                                   "    higher_is_better: false\n";
  auto r = run_command("HF_HUB_OFFLINE=1 " +
                       run_tasks(dir, "evaluate_metrics", "VIRTUAL_ENV=" + quoted(env)) +
                       " --log_samples --output_path out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // evaluate itself on each sample's (target, response).
  std::ofstream(dir / "check.py")
      << "import evaluate, glob, json, sys\n"
         "d = sys.argv[1]\n"
         "a, b = evaluate.load(d + '/span_a'), evaluate.load(d + '/span_b')\n"
         "n = 0\n"
         "for line in open(glob.glob(d + '/out/*/samples_evaluate_metrics_*.jsonl')[0]):\n"
         "    s = json.loads(line)\n"
         "    g, p = s['target'], s['filtered_resps'][0]\n"
         "    want = {**a.compute(references=[g], predictions=[p], scale=3),\n"
         "            **b.compute(references=[g], predictions=[p])}\n"
         "    got = {k: s[k] for k in ('span_a', 'span_b')}\n"
         "    assert got == want, (got, want)\n"
         "    n += 1\n"
         "res = json.load(open(glob.glob(d + '/out/*/results_*.json')[0]))\n"
         "hib = res['higher_is_better']['evaluate_metrics']\n"
         "assert hib['span_a'] is True and hib['span_b'] is False, hib\n"
         "print(n)\n";
  auto c = run_command("HF_HUB_OFFLINE=1 " + quoted(env / "bin" / "python3") + " " +
                       quoted(dir / "check.py") + " " + quoted(dir));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_EQ(c.out, "8\n") << c.err;
  fs::remove_all(dir);
}

// A custom_dataset that cannot reach its data (an OSError: offline, not cached) is a runtime
// failure of this machine (exit 1; validate notes it and goes on), one that raises anything else is
// exit 2 naming the YAML line; a metric function that raises is exit 2 naming the task and frame.
TEST(PythonFunctions, CustomDatasetAndMetricFailures) {
  REQUIRE_PYTHON_ENV(env);
  fs::path dir = scratch("custom");
  std::ofstream(dir / "utils.py") << "def offline(**kwargs):\n"
                                     "    raise ConnectionError('no network here')\n"
                                     "\n"
                                     "def broken(**kwargs):\n"
                                     "    return {'test': [{'x': kwargs['nope']}]}\n"
                                     "\n"
                                     "def bad_metric(references, predictions):\n"
                                     "    return 1 / 0\n";
  const std::string body =
      "test_split: test\noutput_type: generate_until\ndoc_to_text: q\ndoc_to_target: a\n";
  std::ofstream(dir / "a.yaml") << "task: cd_offline\n"
                                << body << "custom_dataset: !function utils.offline\n";
  std::ofstream(dir / "b.yaml") << "task: cd_broken\n"
                                << body << "custom_dataset: !function utils.broken\n";
  std::ofstream(dir / "c.yaml") << "task: metric_raises\n"
                                   "dataset_path: lmeval-fixtures/py_helpers\n"
                                << body
                                << "metric_list:\n  - metric: !function utils.bad_metric\n"
                                   "    aggregation: mean\n";
  const std::string venv = "VIRTUAL_ENV=" + quoted(env);
  auto r = run_command(run_tasks(dir, "cd_offline", venv));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("could not reach its data from here"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no network here"), std::string::npos) << r.err;
  r = run_command(run_tasks(dir, "cd_broken", venv));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("b.yaml:6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("KeyError: 'nope'"), std::string::npos) << r.err;
  r = run_command(run_tasks(dir, "metric_raises", venv));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("task metric_raises"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("c.yaml:8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("utils.py, line 8, in bad_metric: return 1 / 0"), std::string::npos)
      << r.err;
  r = run_command("cd " + quoted(dir) + " && " + venv + " " + quoted(lmeval_binary()) +
                  " validate --tasks cd_offline --include_path .");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::remove_all(dir);
}

// A Python-class task (`class: !function module.Class`) whose class raises: exit 2 naming the task,
// its YAML file and the `class:` line, the exception and its last frame. In an environment where
// `lm_eval` does not import (its python3 run with -S: no site-packages), exit 2 naming the YAML and
// saying what to install. `validate` builds the class and its first document's requests.
TEST(PythonFunctions, ClassTaskFailuresAndValidate) {
  REQUIRE_PYTHON_ENV(env);
  if (run_command(quoted(env / "bin" / "python3") + " -c 'import lm_eval' 2>/dev/null").exit_code !=
      0)
    GTEST_SKIP() << env << " has no lm_eval";
  fs::path dir = scratch("class_tasks");
  std::ofstream(dir / "broken.py") << "from lm_eval.api.task import ConfigurableTask\n"
                                      "\n"
                                      "class Broken(ConfigurableTask):\n"
                                      "    def __init__(self, config=None):\n"
                                      "        raise ValueError('no data for this class')\n";
  std::ofstream(dir / "broken_class.yaml") << "task: broken_class\n"
                                              "class: !function broken.Broken\n";
  const std::string venv = "VIRTUAL_ENV=" + quoted(env);
  auto r = run_command(run_tasks(dir, "broken_class", venv));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("broken_class.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task broken_class"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ValueError: no data for this class"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.py, line 5, in __init__"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;

  fs::path bare = scratch("bare_python");
  fs::create_directories(bare / "bin");
  std::ofstream(bare / "bin" / "python3")
      << "#!/bin/sh\nexec " << quoted(env / "bin" / "python3") << " -S \"$@\"\n";
  fs::permissions(bare / "bin" / "python3", fs::perms::owner_all);
  r = run_command(run_tasks(dir, "broken_class", "VIRTUAL_ENV=" + quoted(bare)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("broken_class.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pip install lm-eval"), std::string::npos) << r.err;

  r = run_command("cd " + quoted(fixture() / "tasks") + " && " + venv + " " +
                  quoted(lmeval_binary()) + " validate --tasks py_class_task --include_path . " +
                  "--data_dir " + quoted(fixture() / "data"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command("cd " + quoted(fixture() / "tasks") + " && " + quoted(lmeval_binary()) +
                  " ls tasks --include_path .");
  EXPECT_NE(r.out.find("py_class_task"), std::string::npos) << r.out;
  fs::remove_all(dir);
  fs::remove_all(bare);
}

// The fixture's runs under other settings (goldens_variants/<variant>, by
// scripts/gen_python_task_variant_goldens.py): the Python-class task with the qwen3 tokenizer's
// chat template (multi-turn with --system_instruction; single-turn with a template name) and with
// another few-shot seed, and a task whose fewshot_config.samples is a function of no argument.
// Requests, samples and results equal the reference's; the results' model-side keys (the model's
// name and arguments, its tokenizer's special tokens: hashfake_chat against dummy) are not
// compared.
std::vector<GoldenRun> load_variant_runs() {
  std::vector<GoldenRun> runs;
  fs::path dir = fixture() / "goldens_variants";
  std::vector<fs::path> variants;
  if (fs::exists(dir))
    for (const auto& d : fs::directory_iterator(dir)) variants.push_back(d.path());
  std::sort(variants.begin(), variants.end());
  for (const auto& v : variants) {
    std::ifstream in(v / "manifest.json");
    for (const auto& e : Json::parse(in)) runs.push_back({e, v.filename().string()});
  }
  if (runs.empty()) runs.push_back({Json(), "variants_absent"});
  return runs;
}

bool model_side_key(std::string diff) {
  for (const char* lead : {"value ", "missing top-level ", "missing "})
    if (diff.rfind(lead, 0) == 0) {
      diff = diff.substr(std::string(lead).size());
      break;
    }
  for (const char* k :
       {"config/", "model_name", "model_source", "tokenizer_", "eot_token_id", "max_length"})
    if (diff.rfind(k, 0) == 0) return true;
  return false;
}

bool imports_lm_eval(const fs::path& env) {
  return run_command(quoted(env / "bin" / "python3") + " -c 'import lm_eval' 2>/dev/null")
             .exit_code == 0;
}

std::string qwen3_tokenizer() {
  return (lmeval::testing::shared_dir() / "tokenizers" / "qwen3").string();
}

// The lm-eval command of a variant run (its `lmeval_args`, <tok> the qwen3 tokenizer folder).
std::string variant_command(const Json& e, const fs::path& env, const fs::path& out,
                            const fs::path& rec) {
  std::string cmd = "VIRTUAL_ENV=" + quoted(env) + " LMEVAL_RECORD_REQUESTS=" + quoted(rec) + " " +
                    quoted(lmeval_binary()) + " run --model dummy --tasks " +
                    e.at("run").get<std::string>() + " --include_path " +
                    quoted(fixture() / "tasks") + " --data_dir " + quoted(fixture() / "data") +
                    " --log_samples --output_path " + quoted(out);
  for (const auto& a : e.at("lmeval_args")) {
    std::string arg = a.get<std::string>();
    for (size_t p; (p = arg.find("<tok>")) != std::string::npos;)
      arg.replace(p, 5, qwen3_tokenizer());
    cmd += " " + quoted(fs::path(arg));
  }
  return cmd;
}

class PythonTaskVariantTest : public ::testing::TestWithParam<GoldenRun> {};

TEST_P(PythonTaskVariantTest, MatchesReference) {
  const auto& e = GetParam().entry;
  ASSERT_FALSE(e.is_null()) << "no " << fixture() / "goldens_variants";
  REQUIRE_PYTHON_ENV(env);
  if (!fs::exists(qwen3_tokenizer())) GTEST_SKIP() << "no " << qwen3_tokenizer();
  if (!imports_lm_eval(env)) GTEST_SKIP() << env << " has no lm_eval";
  const fs::path goldens = fixture() / "goldens_variants" / GetParam().label;
  fs::path out = scratch("variant_" + GetParam().label);
  std::string cmd = variant_command(e, env, out / "run", out / "requests.jsonl");
  auto res = run_command(cmd);
  ASSERT_EQ(res.exit_code, 0) << cmd << "\n" << res.err;
  std::vector<std::string> diffs;
  for (auto& d : lmeval::testing::golden::diff_run(e, goldens, out / "run"))
    if (!model_side_key(d)) diffs.push_back(d);
  size_t compared = 0;
  for (auto& d : lmeval::testing::golden::diff_recorded_requests(
           out / "requests.jsonl", goldens / e.at("requests").get<std::string>(), &compared))
    diffs.push_back("recorded requests: " + d);
  EXPECT_EQ(compared, e.at("requests_kept").get<size_t>());
  for (const auto& d : diffs) ADD_FAILURE() << d;
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Fixture, PythonTaskVariantTest, ::testing::ValuesIn(load_variant_runs()),
                         [](const auto& info) { return info.param.label; });

// --fewshot_seeds on a Python-class task: one build per seed, each seed's Instances scored in
// turn. Seed 1234's results and samples are the reference's default run (goldens/), seed 7's its
// run with --seed 0,1234,1234,7 (goldens_variants/class_fewshot_seed7).
TEST(PythonFunctions, ClassTaskFewshotSeeds) {
  REQUIRE_PYTHON_ENV(env);
  if (!imports_lm_eval(env)) GTEST_SKIP() << env << " has no lm_eval";
  fs::path out = scratch("class_seeds");
  std::string cmd = "VIRTUAL_ENV=" + quoted(env) + " " + quoted(lmeval_binary()) +
                    " run --model dummy --model_args pretrained=hashfake --tasks py_class_task "
                    "--include_path " +
                    quoted(fixture() / "tasks") + " --data_dir " + quoted(fixture() / "data") +
                    " --fewshot_seeds 1234,7 --log_samples --output_path " + quoted(out);
  auto res = run_command(cmd);
  ASSERT_EQ(res.exit_code, 0) << cmd << "\n" << res.err;
  namespace golden = lmeval::testing::golden;
  std::ifstream rin(golden::find_results(out));
  Json ours = Json::parse(rin);
  std::vector<Json> samples =
      lmeval::testing::read_jsonl(golden::find_samples(out, "py_class_task"));
  const std::vector<std::pair<std::string, fs::path>> seeds = {
      {"1234", fixture() / "goldens" / "results" / "py_class_task__default.json"},
      {"7", fixture() / "goldens_variants" / "class_fewshot_seed7" / "results.json"}};
  const std::vector<fs::path> golden_samples = {
      fixture() / "goldens" / "samples" / "py_class_task__default.jsonl",
      fixture() / "goldens_variants" / "class_fewshot_seed7" / "samples.jsonl"};
  ASSERT_EQ(samples.size(), 16u);
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::ifstream gin(seeds[i].second);
    Json gold = Json::parse(gin);
    std::vector<std::string> diffs;
    golden::walk(ours.at("results_by_fewshot_seed").at(seeds[i].first).at("py_class_task"),
                 gold.at("results").at("py_class_task"), "seed " + seeds[i].first, diffs);
    auto want = lmeval::testing::read_jsonl(golden_samples[i]);
    ASSERT_EQ(want.size(), 8u);
    for (size_t d = 0; d < want.size(); ++d) {
      Json got = samples[i * 8 + d];
      EXPECT_EQ(got.at("fewshot_seed").get<int64_t>(), std::stoll(seeds[i].first));
      got.erase("fewshot_seed");
      golden::walk(got, want[d], "seed " + seeds[i].first + " sample " + std::to_string(d), diffs);
    }
    for (const auto& d : diffs) ADD_FAILURE() << d;
  }
  // `results` is the first seed's, and the two seeds differ (other shots).
  EXPECT_EQ(ours["results"]["py_class_task"],
            ours["results_by_fewshot_seed"]["1234"]["py_class_task"]);
  EXPECT_NE(samples[0]["arguments"], samples[8]["arguments"]);
  fs::remove_all(out);
}

// A chat template the model lacks, a tokenizer folder that is not one: exit 2 naming the flag.
TEST(PythonFunctions, ClassTaskChatTemplateErrors) {
  REQUIRE_PYTHON_ENV(env);
  if (!imports_lm_eval(env)) GTEST_SKIP() << env << " has no lm_eval";
  const std::string base = "cd " + quoted(fixture() / "tasks") + " && VIRTUAL_ENV=" + quoted(env) +
                           " " + quoted(lmeval_binary()) +
                           " run --tasks py_class_task --include_path . --data_dir " +
                           quoted(fixture() / "data") + " --model dummy";
  auto r = run_command(base + " --apply_chat_template");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("this model has no chat template"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--apply_chat_template"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  r = run_command(base + " --model_args tokenizer=/nonexistent/folder --apply_chat_template");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--model_args"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/folder"), std::string::npos) << r.err;
  r = run_command(base + " --fewshot_as_multiturn");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--fewshot_as_multiturn"), std::string::npos) << r.err;
  // A template that raises, also without the system message (HFLM's retry): exit 2 naming it.
  if (!fs::exists(lmeval::testing::shared_dir() / "fixtures" / "gpt2" / "tokenizer.json")) return;
  fs::path tok = scratch("raising_template");
  fs::copy_file(lmeval::testing::shared_dir() / "fixtures" / "gpt2" / "tokenizer.json",
                tok / "tokenizer.json");
  std::ofstream(tok / "tokenizer_config.json")
      << R"({"chat_template": "{{ raise_exception('no questions here') }}"})";
  r = run_command(base + " --model_args " + quoted(fs::path("tokenizer=" + tok.string())) +
                  " --apply_chat_template");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("chat template:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no questions here"), std::string::npos) << r.err;
  fs::remove_all(tok);
}

// fewshot_config.samples is called with no argument, as the reference calls it: a function that
// needs one raises (exit 2 naming it, the YAML line and the TypeError); one that returns no list of
// documents is exit 2 naming fewshot_config.
TEST(PythonFunctions, FewshotSamplesHookErrors) {
  REQUIRE_PYTHON_ENV(env);
  fs::path dir = scratch("fewshot_samples");
  fs::copy_file(fixture() / "tasks" / "fewshot_hooks.py", dir / "fewshot_hooks.py");
  for (const char* fn : {"fewshot_pool_needs_doc", "fewshot_pool_not_a_list"})
    std::ofstream(dir / (std::string(fn) + ".yaml")) << "task: " << fn << "\n"
                                                     << "dataset_path: lmeval-fixtures/py_helpers\n"
                                                        "test_split: test\n"
                                                        "output_type: multiple_choice\n"
                                                        "num_fewshot: 2\n"
                                                        "fewshot_config:\n"
                                                        "  samples: !function fewshot_hooks."
                                                     << fn
                                                     << "\n"
                                                        "doc_to_text: \"{{question}}\"\n"
                                                        "doc_to_choice: \"{{choices}}\"\n"
                                                        "doc_to_target: answer\n";
  const std::string venv = "VIRTUAL_ENV=" + quoted(env);
  auto r = run_command(run_tasks(dir, "fewshot_pool_needs_doc", venv));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fewshot_pool_needs_doc.yaml:7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TypeError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing 1 required positional argument"), std::string::npos) << r.err;
  r = run_command(run_tasks(dir, "fewshot_pool_not_a_list", venv));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fewshot_pool_not_a_list.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a list of documents"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace

namespace {

// The samples lines lm-eval writes for `task` of a user folder of tests/fixtures/user_tasks, run
// with `tasks` from inside the folder as scripts/compare_user_tasks.py runs it.
std::vector<Json> user_samples(const fs::path& env, const std::string& folder,
                               const std::string& tasks, const std::string& task,
                               const std::string& extra = "") {
  const fs::path out = scratch("user_" + folder);
  auto r = run_command("cd " + quoted(source_dir() / "tests/fixtures/user_tasks" / folder) +
                       " && VIRTUAL_ENV=" + quoted(env) + " " + quoted(lmeval_binary()) +
                       " run --model dummy --include_path . --tasks " + tasks + " " + extra +
                       " --log_samples --output_path " + quoted(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<Json> lines;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().filename().string().rfind("samples_" + task + "_", 0) == 0) {
      std::ifstream in(e.path());
      for (std::string text; std::getline(in, text);) lines.push_back(Json::parse(text));
    }
  fs::remove_all(out);
  return lines;
}

Json first_sample(const fs::path& env, const std::string& folder, const std::string& task) {
  auto lines = user_samples(env, folder, task, task);
  return lines.empty() ? Json() : lines[0];
}

}  // namespace

// A Python process_results' scores are written as the reference's samples dump writes them
// (handle_non_serializable): numpy scalars as Python numbers and bools, a set as a list, an array
// or bytes as its str(). Expected values: the reference 0.4.13's samples of the same folders
// (scripts/compare_user_tasks.py --match numpy, identical).
TEST(PythonFunctions, ProcessResultsWrittenAsTheReferenceDumpsThem) {
  REQUIRE_PYTHON_ENV(env);
  Json s = first_sample(env, "numpy_array_results", "u_np_array");
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["arr"], "[2.57142857 0.        ]");
  EXPECT_EQ(s["tags"], Json::array({"a0"}));
  EXPECT_EQ(s["raw"], "b'The answer is 55.'");
  s = first_sample(env, "numpy_process_results", "u_numpy");
  ASSERT_TRUE(s.is_object());
  EXPECT_TRUE(s["f32"].is_number_float()) << s["f32"];
  EXPECT_EQ(s["i64"], 18);
  EXPECT_EQ(s["b"], false);
}

// `random` in doc_to_target and a doc_to_choice that shuffles with the global `random`, two tasks
// in one run: every draw where the reference makes it, so the targets of the samples (rendered
// again when scoring and when writing samples) are the reference 0.4.13's
// (scripts/compare_user_tasks.py --match random, identical). Fails if lm-eval draws once more
// (the chance level calling doc_to_choice again) or once less (document 0's doc_to_text at task
// construction).
TEST(PythonFunctions, GlobalRandomInTargetsAndChoicesAsTheReference) {
  REQUIRE_PYTHON_ENV(env);
  const std::string tasks = "u_random_tc,u_random_gen";
  auto targets = [&](const std::string& task) {
    std::vector<std::string> out;
    for (const auto& s :
         user_samples(env, "random_in_target_and_choices", tasks, task, "--num_fewshot 1"))
      out.push_back(s["target"].get<std::string>());
    return out;
  };
  EXPECT_EQ(targets("u_random_tc"), (std::vector<std::string>{"0", "1", "1", "0", "0", "1"}));
  EXPECT_EQ(targets("u_random_gen"),
            (std::vector<std::string>{"h2", "h1", "h1", "h1", "h3", "h1"}));
}

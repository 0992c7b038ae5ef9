// `lm-eval run/validate` on bad flags and broken task YAMLs: exit 2, one message naming the
// flag or the file and line and what was expected, and no results table on stdout. Where the
// reference raises (its behaviour, noted per case, decides what is an error), so do we.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.write("data/test.jsonl",
                   "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
                   "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
    task("t1");
  }
  // A valid multiple-choice task tasks/<name>.yaml, plus `extra` lines (from line 10 on).
  void task(const std::string& name, const std::string& extra = "") {
    scratch_.write("tasks/" + name + ".yaml",
                   "task: " + name + "\ndataset_path: json\ndataset_kwargs:\n  data_files:\n" +
                       "    test: " + (dir_ / "data/test.jsonl").string() +
                       "\noutput_type: multiple_choice\ntest_split: test\n" +
                       "doc_to_text: \"Q: {{q}}\"\ndoc_to_choice: choices\ndoc_to_target: label\n" +
                       extra);
  }
  lmeval::testing::CommandResult lm(const std::string& args) {
    return lmeval::testing::run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                                        lmeval::testing::lmeval_binary().string() + "' " + args);
  }
  // `run --model dummy --include_path tasks <args>` fails with exit 2, every `wanted` piece in
  // its message, and nothing on stdout.
  void refused(const std::string& args, const std::vector<std::string>& wanted) {
    auto r = lm("run --model dummy --include_path tasks " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    for (const auto& w : wanted)
      EXPECT_NE(r.err.find(w), std::string::npos) << args << ": no '" << w << "' in\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_bad_input"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

// argparse type=int / type=float: "invalid int value: 'abc'", exit 2 (CPython's int('') and
// float('') fail too).
TEST_F(BadInput, NumberFlagsTakePythonNumbersOnly) {
  refused("--tasks t1 --num_fewshot abc",
          {"--num_fewshot", "invalid int value: 'abc'", "expected an integer"});
  refused("--tasks t1 --num_fewshot ''", {"--num_fewshot", "invalid int value: ''"});
  refused("--tasks t1 --num_fewshot 1.5", {"--num_fewshot", "invalid int value: '1.5'"});
  // int() takes it (the reference then fails drawing that many examples); lm-eval names the
  // flag and its largest value rather than a range that includes negative counts.
  refused("--tasks t1 --num_fewshot 99999999999999999999",
          {"--num_fewshot", "out of range", "at most 2147483647"});
  refused("--tasks t1 --limit abc", {"--limit", "invalid float value: 'abc'", "expected a number"});
  refused("--tasks t1 --limit ''", {"--limit", "invalid float value: ''"});
  refused("--tasks t1 --bootstrap_iters 1e3", {"--bootstrap_iters", "invalid int value: '1e3'"});
  // What Python's int() and float() accept still runs: int(' 1_0 ') == 10 > 2 documents, so
  // the sampler's own error; float('1_0') == 10.0.
  auto ok = lm("run --model dummy --include_path tasks --tasks t1 --limit 1_0 --num_fewshot ' 1 '");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("limit: 10.0, num_fewshot: 1"), std::string::npos) << ok.out;
}

// process_tasks splits on ',' keeping empty names, and "Tasks not found: " follows.
TEST_F(BadInput, EmptyTaskNameIsRefused) {
  for (const char* tasks : {"t1,,t1", "t1,", "''"})
    refused(std::string("--tasks ") + tasks, {"--tasks", "empty task name"});
  auto v = lm("validate --include_path tasks --tasks t1,,t1");
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_NE((v.out + v.err).find("empty task name"), std::string::npos) << v.out << v.err;
  auto ok = lm("run --model dummy --include_path tasks --tasks t1,t1 t1");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// simple_evaluate calls np.random.seed(numpy_seed): ValueError outside 0..2**32-1.
TEST_F(BadInput, NumpySeedOutOfRangeIsRefused) {
  refused("--tasks t1 --seed -1", {"--seed", "numpy seed -1", "0 to 4294967295"});
  auto ok = lm("run --model dummy --include_path tasks --tasks t1 --seed -5,0,-5");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// The reference recurses until RecursionError.
TEST_F(BadInput, GroupCycleIsRefusedNotACrash) {
  scratch_.write("tasks/g.yaml", "group: gself\ntask:\n  - t1\n  - gself\n");
  refused("--tasks gself", {"g.yaml:4", "task[1]", "gself -> gself"});
  auto v = lm("validate --include_path tasks --tasks gself");
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_NE((v.out + v.err).find("gself -> gself"), std::string::npos) << v.out << v.err;
}

// ConfigurableTask.__init__ looks at document 0: test_choice[test_target] raises IndexError
// past either end, and the whitespace check's choice[0] raises for an empty or non-string
// choice. Later documents' bad targets are warned about and scored wrong (process_results).
TEST_F(BadInput, FirstDocumentChecksOfTheReference) {
  // doc_to_target 7 with 2 choices on document 0.
  task("t_idx");
  std::string y = lmeval::testing::read_file(dir_ / "tasks/t_idx.yaml");
  y.replace(y.find("doc_to_target: label"), 20, "doc_to_target: 7");
  scratch_.write("tasks/t_idx.yaml", y);
  refused("--tasks t_idx", {"t_idx.yaml:10", "doc_to_target", "doc_id 0", "index 7",
                            "expected an index from -2 to 1"});
  auto v = lm("validate --include_path tasks --tasks t_idx");
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_NE((v.out + v.err).find("t_idx.yaml:10"), std::string::npos) << v.out << v.err;
  // -2 is a valid Python index into 2 choices.
  y.replace(y.find("doc_to_target: 7"), 16, "doc_to_target: -2");
  scratch_.write("tasks/t_idx.yaml", y);
  EXPECT_EQ(lm("run --model dummy --include_path tasks --tasks t_idx").exit_code, 0);
  for (const char* choices : {"[1, 2]", "['', b]"}) {
    task("t_ch");
    std::string c = lmeval::testing::read_file(dir_ / "tasks/t_ch.yaml");
    c.replace(c.find("doc_to_choice: choices"), 22, std::string("doc_to_choice: ") + choices);
    scratch_.write("tasks/t_ch.yaml", c);
    refused("--tasks t_ch",
            {"t_ch.yaml:9", "doc_to_choice", "doc_id 0", "choice 0", "expected non-empty strings"});
  }
}

// No choices: no log-likelihoods, and the reference's np.argmax([]) raises; here any
// document's empty list is refused naming it (document 0 by the index check above).
TEST_F(BadInput, EmptyChoiceListIsRefusedWithTheDocument) {
  scratch_.write("data/test.jsonl",
                 "{\"q\": \"a\", \"choices\": [\"1\", \"2\"], \"label\": \"1\"}\n"
                 "{\"q\": \"b\", \"choices\": [], \"label\": \"1\"}\n");
  refused("--tasks t1", {"t1.yaml:9", "doc_to_choice", "doc_id 1", "no choices",
                         "expected at least one choice per document"});
}

// EvaluatorConfig._configure raises for these whatever their source; `validate` reports them
// as `run` does, and a value from the --config file is reported at its line there.
TEST_F(BadInput, ConfigFileSettingsAreCheckedByValidateAndLocated) {
  const std::string head = "model: dummy\ntasks: t1\ninclude_path: tasks\n";
  struct Case {
    std::string line, field;
  };
  for (const Case& c :
       {Case{"fewshot_as_multiturn: true", "fewshot_as_multiturn"},
        Case{"samples: notjson", "samples"}, Case{"limit: 0", "limit"},
        Case{"num_fewshot: -1", "num_fewshot"}, Case{"verbosity: LOUD", "verbosity"},
        Case{"log_samples: true", "log_samples"}}) {
    scratch_.write("eval.yaml", head + c.line + "\n");
    for (const char* cmd : {"validate", "run"}) {
      auto r = lm(std::string(cmd) + " --config eval.yaml");
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << c.line << "\n" << r.err;
      EXPECT_NE(r.err.find("eval.yaml:4:1: " + c.field + ":"), std::string::npos)
          << cmd << " " << c.line << "\n"
          << r.err;
      EXPECT_EQ(r.out.find("|t1"), std::string::npos) << r.out;
    }
  }
  // A flag given for the key is what is reported.
  scratch_.write("eval.yaml", head + "limit: 0\n");
  auto r = lm("run --config eval.yaml --limit -3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--limit: -3.0 is out of range"), std::string::npos) << r.err;
}

// The reference's index skips unreadable files with a debug log only; `ls` still lists the rest
// (exit 0) and names the user's broken files on stderr.
TEST_F(BadInput, LsNamesUnreadableIncludePathFiles) {
  scratch_.write("tasks/broken.yaml", "task: broken\ndoc_to_text: \"unclosed\n");
  auto r = lm("ls tasks --include_path tasks");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|t1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("note: not listed: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid YAML"), std::string::npos) << r.err;
}

// argparse's type=int/type=float are Python's int() and float(), which read any Unicode decimal
// digit: `--num_fewshot ١` is 1 (CPython: int('\u0661') == 1), `--limit ２` is 2.0, and --seed's
// items go through int() as well.
TEST_F(BadInput, NumberFlagsReadUnicodeDigitsAsPythonDoes) {
  auto ok =
      lm("run --model dummy --include_path tasks --tasks t1 --num_fewshot \u0661 "
         "--limit \uff12 --seed \u0664\u0662");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("limit: 2.0, num_fewshot: 1"), std::string::npos) << ok.out;
  // A superscript two is a digit to str.isdigit() but not to int().
  refused("--tasks t1 --num_fewshot \u00b2", {"--num_fewshot", "invalid int value"});
}

// A --config file that cannot be read is the one problem validate reports: the run's tasks are
// unknown then, not missing (the reference stops at the file too).
TEST_F(BadInput, ValidateOfAnUnreadableConfigReportsOnlyTheFile) {
  scratch_.write("eval.yaml", "model: dummy\ntasks: [t1\n");
  auto r = lm("validate --config eval.yaml --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1 problem found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("eval.yaml:3:1: invalid YAML"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("No tasks specified"), std::string::npos) << r.err;
  scratch_.write("eval.yaml", "- model\n- dummy\n");
  r = lm("validate --config eval.yaml --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1 problem found"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("No tasks specified"), std::string::npos) << r.err;
  // A `tasks` value of the wrong type (the reference: TypeError 'int' object is not iterable)
  // is the one problem too: the tasks are unknown, not absent.
  scratch_.write("eval.yaml", "model: dummy\ntasks: 5\n");
  r = lm("validate --config eval.yaml --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1 problem found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("eval.yaml:2:1: tasks:"), std::string::npos) << r.err;
  // A folder is no config file (EvaluatorConfig.from_config: "Config file not found"), not a
  // YAML document whose root is no mapping.
  for (const char* cmd : {"validate", "run"}) {
    r = lm(std::string(cmd) + " --config tasks");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("Config file not found"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
  }
}

// dataset_kwargs.data_files holds file paths; `datasets` fails on anything else with an
// AttributeError ('int' object has no attribute 'decode'), which the reference shows as a
// traceback. Refused at the value's own line, not as a missing split.
TEST_F(BadInput, NonPathDataFilesAreRefusedAtTheirLine) {
  struct Case {
    std::string yaml, where;
  };
  for (const Case& c :
       {Case{"    test: 5\n", "t2.yaml:5:5: dataset_kwargs.data_files.test:"},
        Case{"    test: [a.jsonl, true]\n", "dataset_kwargs.data_files.test[1]"},
        Case{"    test: null\n", "dataset_kwargs.data_files.test:"},
        Case{"    test: []\n", "an empty list"}, Case{"    test:\n      a: b\n", "a mapping"}}) {
    scratch_.write("tasks/t2.yaml",
                   "task: t2\ndataset_path: json\ndataset_kwargs:\n  data_files:\n" + c.yaml +
                       "output_type: multiple_choice\ntest_split: test\ndoc_to_text: q\n"
                       "doc_to_choice: choices\ndoc_to_target: label\n");
    refused("--tasks t2", {c.where, "expected a file path or a non-empty list of file paths"});
    auto r = lm("run --model dummy --include_path tasks --tasks t2");
    EXPECT_EQ(r.err.find("not found"), std::string::npos) << r.err;
  }
}

// A task YAML whose `task` YAML reads as a number: the reference's index fails sorting it among
// the names (TypeError). lm-eval leaves the file out of the index and says why where the name
// is asked for, instead of only "Tasks not found".
TEST_F(BadInput, NumericTaskNameIsNamedWithItsFile) {
  scratch_.write("tasks/num.yaml", "task: 123\ndataset_path: json\n");
  refused("--tasks 123", {"Tasks not found: 123", "num.yaml:1:1", "task name 123 is not a string"});
  auto ls = lm("ls tasks --include_path tasks");
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.err.find("task name 123 is not a string"), std::string::npos) << ls.err;
}

// Issue 32: a folder symlink back up the tree under --include_path made `ls` and `run` fail
// with an internal error ("Too many levels of symbolic links"); the loop is not entered twice.
TEST_F(BadInput, SymlinkLoopUnderIncludePathIsNotFollowed) {
  fs::create_directory_symlink("..", dir_ / "tasks" / "up");
  fs::create_directory_symlink(".", dir_ / "tasks" / "self");
  auto ls = lm("ls tasks --include_path tasks");
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("t1"), std::string::npos) << ls.out;
  auto run = lm("run --model dummy --include_path tasks --tasks t1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("|t1"), std::string::npos) << run.out;
}

// Issue 32: LMEVAL_CACHE_CHUNK=abc or -1 fell back to 256 without a word.
TEST_F(BadInput, BadCacheChunkIsRefused) {
  for (const std::string v : {"abc", "-1", "0", "12x"}) {
    auto r = lmeval::testing::run_command(
        "cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 LMEVAL_CACHE_CHUNK=" + v + " '" +
        lmeval::testing::lmeval_binary().string() +
        "' run --model dummy --include_path tasks --tasks t1 --use_cache c");
    EXPECT_EQ(r.exit_code, 2) << v << ": " << r.err;
    EXPECT_NE(r.err.find("LMEVAL_CACHE_CHUNK: LMEVAL_CACHE_CHUNK is '" + v + "'"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("from 1 to 1000000"), std::string::npos) << r.err;
  }
}

// Issue 32: a --data_dir that is a file or missing was ignored, and the error spoke only of the
// Hub cache.
TEST_F(BadInput, DataDirMustBeAFolder) {
  scratch_.write("afile", "x");
  for (const auto& [dir, why] : {std::pair<std::string, std::string>{"afile", "is not a folder"},
                                 {"missing", "does not exist"}}) {
    for (const std::string cmd : {"run --model dummy", "validate"}) {
      auto r = lm(cmd + " --include_path tasks --tasks t1 --data_dir " + dir);
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << dir << ": " << r.err;
      EXPECT_NE(r.err.find("--data_dir: " + dir + " " + why), std::string::npos) << r.err;
    }
  }
  auto env = lmeval::testing::run_command("cd '" + dir_.string() +
                                          "' && LMEVAL_NO_INDEX_CACHE=1 LMEVAL_DATA_DIR=missing '" +
                                          lmeval::testing::lmeval_binary().string() +
                                          "' run --model dummy --include_path tasks --tasks t1");
  EXPECT_EQ(env.exit_code, 2) << env.err;
  EXPECT_NE(env.err.find("LMEVAL_DATA_DIR: missing does not exist"), std::string::npos) << env.err;
}

// Issue 32: a helper calling os._exit(0) ended lm-eval with exit 0, no results and no message.
// In lm-eval's process os._exit raises: exit 2 naming the YAML line and the function.
TEST_F(BadInput, HelperCallingOsExitIsAnErrorNotAnExit) {
  scratch_.write("tasks/utils.py", "import os\n\ndef bad(doc):\n    os._exit(0)\n");
  task("tx", "");
  std::string yaml = lmeval::testing::read_file(dir_ / "tasks" / "tx.yaml");
  yaml.replace(yaml.find("doc_to_text: \"Q: {{q}}\""), 23, "doc_to_text: !function utils.bad");
  scratch_.write("tasks/tx.yaml", yaml);
  auto r = lm("run --model dummy --include_path tasks --tasks tx");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("tasks/tx.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`!function utils.bad` raised RuntimeError: os._exit(0) was called"),
            std::string::npos)
      << r.err;
}

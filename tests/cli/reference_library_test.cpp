// The reference's task library by name (issue 15, point 5): when the active Python environment
// has the lm_eval package, `run --tasks NAME` and `ls tasks` include its task folder (as a root
// before the built-ins and --include_path); otherwise a name of that library gets a message
// saying how to get it. The "package" here is a stand-in folder in the layout pip makes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

namespace {

class ReferenceLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    write("data/test.jsonl",
          "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
          "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
    tasks_ = "venv/lib/python3.11/site-packages/lm_eval/tasks";
    // A task of the stand-in library, and one that a built-in of the same name must override.
    task(tasks_ + "/mine/ref_only_task.yaml", "ref_only_task");
    task(tasks_ + "/arc_standin/arc_easy.yaml", "arc_easy",
         "description: 'stand-in, must not win'\n");
    fs::create_directories(dir_ / "venv/bin");
  }
  void write(const std::string& rel, const std::string& text) { scratch_.write(rel, text); }
  void task(const std::string& rel, const std::string& name, const std::string& extra = "") {
    write(rel,
          "task: " + name + "\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
              (dir_ / "data/test.jsonl").string() +
              "\noutput_type: multiple_choice\ntest_split: test\n"
              "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\ndoc_to_target: label\n" +
              extra);
  }
  lmeval::testing::CommandResult lm(const std::string& args, const std::string& env) {
    return run_command("cd '" + dir_.string() + "' && env -u LMEVAL_REFERENCE_TASKS " +
                       "LMEVAL_NO_INDEX_CACHE=1 " + env + " '" +
                       lmeval::testing::lmeval_binary().string() + "' " + args + " </dev/null");
  }
  // An interpreter install at `prefix` (bin/python3 -> python3.11, here /bin/false: it must not
  // be run) whose site-packages receives the stand-in package.
  void interpreter(const std::string& prefix) {
    fs::create_directories(dir_ / prefix / "bin");
    fs::copy_file("/bin/false", dir_ / prefix / "bin/python3.11");
    fs::create_symlink("python3.11", dir_ / prefix / "bin/python3");
    fs::create_directories(dir_ / prefix / "lib/python3.11/site-packages/lm_eval");
    fs::rename(dir_ / tasks_, dir_ / prefix / "lib/python3.11/site-packages/lm_eval/tasks");
  }
  std::string venv() const { return "VIRTUAL_ENV='" + (dir_ / "venv").string() + "'"; }
  lmeval::testing::ScratchDir scratch_{"lmeval_reflib"};
  const fs::path dir_ = scratch_.path();
  std::string tasks_;
};

TEST_F(ReferenceLibrary, ItsTasksRunByNameFromTheActiveVirtualEnvironment) {
  auto r = lm("run --model dummy --tasks ref_only_task", venv());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ref_only_task"), std::string::npos) << r.out;
  // Without it, the same name is not found.
  r = lm("run --model dummy --tasks ref_only_task", "LMEVAL_REFERENCE_TASKS=off");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Tasks not found: ref_only_task"), std::string::npos) << r.err;
}

TEST_F(ReferenceLibrary, LsTasksListsItAndBuiltInsKeepTheirNames) {
  auto r = lm("ls tasks", venv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ref_only_task"), std::string::npos);
  // arc_easy is listed once, at the built-in's location (built-ins override the library).
  const auto at = r.out.find("|arc_easy ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("|arc_easy ", at + 1), std::string::npos);
  const std::string row = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_EQ(row.find("arc_standin"), std::string::npos) << row;
  r = lm("ls tasks", "LMEVAL_REFERENCE_TASKS=off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("ref_only_task"), std::string::npos);
}

TEST_F(ReferenceLibrary, FoundThroughPython3OnPathWhenNoVirtualEnvironment) {
  // A stand-in python3 that answers the find_spec question with the stand-in folder.
  write("bin/python3", "#!/bin/sh\necho '" + (dir_ / tasks_).string() + "'\n");
  ::chmod((dir_ / "bin/python3").c_str(), 0755);
  auto r = lm("run --model dummy --tasks ref_only_task",
              "env -u VIRTUAL_ENV PATH='" + (dir_ / "bin").string() + ":/usr/bin:/bin'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ReferenceLibrary, FoundBesideAnInterpreterExecutableWithoutRunningIt) {
  // An executable python3 -> python3.11 (here /bin/false: it must not be run) whose prefix holds
  // lib/python3.11/site-packages/lm_eval/tasks, as a non-venv install lays it out.
  interpreter("prefix");
  auto r = lm("run --model dummy --tasks ref_only_task", "env -u VIRTUAL_ENV HOME='" +
                                                             dir_.string() + "' PATH='" +
                                                             (dir_ / "prefix/bin").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ReferenceLibrary, PyenvShimIsResolvedToItsVersionWithoutRunningIt) {
  // $PYENV_ROOT/shims/python3 (a shim that fails if run), $PYENV_ROOT/version naming 3.11.0,
  // whose interpreter's site-packages holds the stand-in package.
  write("pyenv/shims/python3", "#!/bin/sh\nexit 1\n");
  ::chmod((dir_ / "pyenv/shims/python3").c_str(), 0755);
  write("pyenv/version", "3.11.0\n");
  interpreter("pyenv/versions/3.11.0");
  auto r = lm("run --model dummy --tasks ref_only_task",
              "env -u VIRTUAL_ENV -u PYENV_VERSION HOME='" + dir_.string() + "' PATH='" +
                  (dir_ / "pyenv/shims").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ReferenceLibrary, ANameOfTheLibraryWithoutItSaysHowToGetIt) {
  // xnli_en is a task of lm-eval 0.4.13 (tasks/reference_library_names.txt) and no built-in.
  auto r = lm("run --model dummy --tasks xnli_en",
              "env -u VIRTUAL_ENV PATH='" + (dir_ / "bin").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const char* want : {"Tasks not found: xnli_en", "reference's task library",
                           "pip install lm-eval==0.4.13", "--include_path"})
    EXPECT_NE(r.err.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.err;
  // A name of no library gets no such advice.
  r = lm("run --model dummy --tasks no_such_task_xyz", "LMEVAL_REFERENCE_TASKS=off");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find("reference's task library"), std::string::npos) << r.err;
}

// The reference's TaskManager.match_tasks matches a glob over every name it knows, its library
// included: built-ins matching it do not stop the library from being consulted.
TEST_F(ReferenceLibrary, AGlobMatchesOverTheLibraryToo) {
  task("local/glob_a.yaml", "glob_a");
  task(tasks_ + "/mine/glob_b.yaml", "glob_b");
  auto r = lm("run --model dummy --tasks 'glob_*' --include_path local", venv());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|glob_a"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|glob_b"), std::string::npos) << r.out;
  r = lm("run --model dummy --tasks 'glob_*' --include_path local", "LMEVAL_REFERENCE_TASKS=off");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|glob_a"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("|glob_b"), std::string::npos) << r.out;
}

// Without the library a glob says what the reference would also have matched
// (mmlu_high_school_c*: 2 built-ins, 8 names of lm-eval 0.4.13; tests/tasks/goldens/
// match_tasks.json has them from the reference), and one that matches only its names says how
// to get them.
TEST_F(ReferenceLibrary, AGlobWithoutTheLibrarySaysWhatItLeavesOut) {
  auto r =
      lm("validate --tasks 'mmlu_high_school_c*'", "LMEVAL_REFERENCE_TASKS=off HF_HUB_OFFLINE=1");
  for (const char* want :
       {"--tasks 'mmlu_high_school_c*' matches 2 names here",
        "also matches mmlu_high_school_chemistry_continuation, "
        "mmlu_high_school_chemistry_generative, mmlu_high_school_chemistry_generative_spanish, "
        "mmlu_high_school_computer_science_continuation, "
        "mmlu_high_school_computer_science_generativ_spanishe and 1 more",
        "pip install lm-eval==0.4.13"})
    EXPECT_NE(r.err.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.err;
  r = lm("run --model dummy --tasks 'xnli_e*'", "LMEVAL_REFERENCE_TASKS=off");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const char* want :
       {"Tasks not found: xnli_e*",
        "xnli_e* (matching xnli_el, xnli_en, xnli_es, xnli_es_spanish_bench, xnli_eu and 3 more)",
        "reference's task library", "pip install lm-eval==0.4.13"})
    EXPECT_NE(r.err.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.err;
  // A glob the built-ins match fully gets no such line.
  r = lm("validate --tasks 'demo_story_c*'", "LMEVAL_REFERENCE_TASKS=off");
  EXPECT_EQ(r.err.find("reference's task library"), std::string::npos) << r.err;
}

}  // namespace

// The reference's command-line surface (issue 33): the `lm_eval` name, --metadata as k=v,
// --include_path as a ':' list, --verbosity and $LMEVAL_LOG_LEVEL, --cache_requests said to do
// nothing, YAML path globs. Expected values from the reference's code (cited per test).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

namespace {

class Surface : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.write("data/test.jsonl",
                   "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
                   "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
    task("tasks/t1.yaml", "t1");
  }
  void task(const std::string& rel, const std::string& name) {
    scratch_.write(rel, "task: " + name +
                            "\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                            (dir_ / "data/test.jsonl").string() +
                            "\noutput_type: multiple_choice\ntest_split: test\n"
                            "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\n"
                            "doc_to_target: label\n");
  }
  lmeval::testing::CommandResult lm(const std::string& args, const std::string& env = "",
                                    const fs::path& binary = lmeval::testing::lmeval_binary()) {
    return run_command("cd '" + dir_.string() + "' && env -u LMEVAL_LOG_LEVEL " +
                       "LMEVAL_NO_INDEX_CACHE=1 LMEVAL_REFERENCE_TASKS=off " + env + " '" +
                       binary.string() + "' " + args + " </dev/null");
  }
  nlohmann::json results(const std::string& out) {
    for (const auto& e : fs::recursive_directory_iterator(dir_ / out))
      if (e.path().filename().string().rfind("results_", 0) == 0)
        return nlohmann::json::parse(lmeval::testing::read_file(e.path()));
    return {};
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_surface"};
  const fs::path dir_ = scratch_.path();
};

const std::string kRun = "run --model dummy --tasks t1 --include_path tasks";

}  // namespace

// The reference installs both console scripts (lm-eval, lm_eval: entry_points.txt).
TEST_F(Surface, LmEvalUnderscoreIsTheSameProgram) {
  const fs::path alias = lmeval::testing::lmeval_binary().parent_path() / "lm_eval";
  ASSERT_TRUE(fs::is_symlink(alias)) << alias << " is not built beside lm-eval";
  EXPECT_EQ(fs::read_symlink(alias), "lm-eval");
  auto a = lm(kRun + " --output_path a", "", alias);
  auto b = lm(kRun + " --output_path b");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(lmeval::testing::results_without_timings(dir_ / "a"),
            lmeval::testing::results_without_timings(dir_ / "b"));
  // The built-in tasks are found through the link as through the binary.
  auto ls = lm("ls tasks", "", alias);
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("demo_story_cloze"), std::string::npos);
}

TEST_F(Surface, InstallPutsLmEvalBesideLmEval) {
  const fs::path build = lmeval::testing::lmeval_binary().parent_path();
  if (!fs::exists(build / "cmake_install.cmake")) GTEST_SKIP() << "no CMake build folder";
  auto r = run_command("cmake --install '" + build.string() + "' --prefix '" +
                       (dir_ / "prefix").string() + "' 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path alias = dir_ / "prefix/bin/lm_eval";
  ASSERT_TRUE(fs::is_symlink(alias)) << r.out;
  EXPECT_EQ(fs::read_symlink(alias), "lm-eval");
  // Run through the link, the installed binary takes the installed tasks.
  auto ls = lm("ls tasks", "env -u LMEVAL_TASKS_DIR LMEVAL_LOG_LEVEL=DEBUG", alias);
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("demo_story_cloze"), std::string::npos);
  EXPECT_NE(
      ls.err.find("Building task index from " + (dir_ / "prefix/share/lm-eval/tasks").string()),
      std::string::npos)
      << ls.err;
}

// MergeDictAction (lm_eval/_cli/utils.py): `k=v` values, each split_top_level, the value by
// handle_cli_value_string ("[64]" by ast.literal_eval), merged; {"max_seq_lengths": [64],
// "foo": "bar"} as tests/config/goldens/kv_flags.json has it from the reference.
TEST_F(Surface, MetadataTakesKeyValuePairsAsTheReference) {
  auto r = lm(kRun + " --metadata max_seq_lengths=[64] foo=bar --output_path out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto meta = results("out")["configs"]["t1"]["metadata"];
  EXPECT_EQ(meta["max_seq_lengths"], nlohmann::json::parse("[64]")) << meta;
  EXPECT_EQ(meta["foo"], "bar") << meta;
  // The JSON form as before; a later occurrence merges over an earlier one.
  r = lm(kRun + " --metadata '{\"foo\": 1}' --metadata foo=2,bar=x --output_path json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto merged = results("json")["configs"]["t1"]["metadata"];
  EXPECT_EQ(merged["foo"], 2) << merged;
  EXPECT_EQ(merged["bar"], "x") << merged;
  // An item without '=' is the reference's parser error (exit 2).
  r = lm(kRun + " --metadata foo");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--metadata"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected `key=value`, got 'foo'"), std::string::npos) << r.err;
}

// --include_path a:b: the folders of the list; a path that exists is taken whole, as the
// reference takes every value (TaskManager(include_path=str)).
TEST_F(Surface, IncludePathIsAColonSeparatedList) {
  task("a/ta.yaml", "ta");
  task("b/tb.yaml", "tb");
  auto r = lm("run --model dummy --tasks ta,tb --include_path a:b");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|ta "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|tb "), std::string::npos) << r.out;
  r = lm("ls tasks --include_path a:b");
  EXPECT_NE(r.out.find("|tb "), std::string::npos) << r.out;
  r = lm("run --model dummy --tasks ta --include_path a:missing_folder");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'missing_folder' does not exist (one of 'a:missing_folder')"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--include_path"), std::string::npos) << r.err;
  task("c:d/tcd.yaml", "tcd");
  r = lm("run --model dummy --tasks tcd --include_path c:d");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// setup_logging (lm_eval/utils.py): $LMEVAL_LOG_LEVEL wins when it names a level, else the
// --verbosity value; the reference's TaskIndex.build and evaluate() debug lines.
TEST_F(Surface, VerbosityAndLogLevelEnvironment) {
  const char* debug_line = "Task: t1; number of requests on this rank: 4";
  auto plain = lm(kRun + " --limit 2");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find(debug_line), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("SHOULD ONLY BE USED FOR TESTING"), std::string::npos) << plain.err;
  auto debug = lm(kRun + " --limit 2 --verbosity DEBUG");
  ASSERT_EQ(debug.exit_code, 0) << debug.err;
  EXPECT_NE(debug.err.find(debug_line), std::string::npos) << debug.err;
  EXPECT_NE(debug.err.find("Building task index from "), std::string::npos) << debug.err;
  EXPECT_NE(debug.err.find("Built task index with "), std::string::npos) << debug.err;
  auto env = lm(kRun + " --limit 2", "LMEVAL_LOG_LEVEL=debug");
  EXPECT_NE(env.err.find(debug_line), std::string::npos) << env.err;
  // The environment wins over the flag, both ways; a name that is no level is ignored.
  auto quiet = lm(kRun + " --limit 2 --verbosity DEBUG", "LMEVAL_LOG_LEVEL=ERROR");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find(debug_line), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.find("SHOULD ONLY BE USED FOR TESTING"), std::string::npos) << quiet.err;
  auto loud = lm(kRun + " --limit 2 --verbosity ERROR", "LMEVAL_LOG_LEVEL=DEBUG");
  EXPECT_NE(loud.err.find(debug_line), std::string::npos) << loud.err;
  auto bogus = lm(kRun + " --limit 2 --verbosity DEBUG", "LMEVAL_LOG_LEVEL=LOUD");
  EXPECT_NE(bogus.err.find(debug_line), std::string::npos) << bogus.err;
  auto bogus_default = lm(kRun + " --limit 2", "LMEVAL_LOG_LEVEL=10");
  EXPECT_EQ(bogus_default.err.find(debug_line), std::string::npos) << bogus_default.err;
  EXPECT_NE(bogus_default.err.find("SHOULD ONLY BE USED"), std::string::npos) << bogus_default.err;
}

// The reference caches built requests; lm-eval has no such cache and says so, per value.
TEST_F(Surface, CacheRequestsSaysItKeepsNoCache) {
  auto bare = lm(kRun + " --cache_requests");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.err.find("--cache_requests true: lm-eval keeps no requests cache"),
            std::string::npos)
      << bare.err;
  auto refresh = lm(kRun + " --cache_requests refresh");
  EXPECT_NE(refresh.err.find("--cache_requests refresh: lm-eval keeps no requests cache"),
            std::string::npos)
      << refresh.err;
  auto del = lm(kRun + " --cache_requests delete");
  EXPECT_NE(del.err.find("nothing to delete"), std::string::npos) << del.err;
  // Said at WARNING, so also where INFO is off.
  auto warn = lm(kRun + " --cache_requests", "LMEVAL_LOG_LEVEL=WARNING");
  EXPECT_NE(warn.err.find("keeps no requests cache"), std::string::npos) << warn.err;
  auto none = lm(kRun);
  EXPECT_EQ(none.err.find("requests cache"), std::string::npos) << none.err;
  auto bad = lm(kRun + " --cache_requests sometimes");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

// The reference's process_tasks expands a YAML path with glob.glob.
TEST_F(Surface, YamlPathGlobs) {
  task("more/t2.yaml", "t2");
  task("more/t3.yaml", "t3");
  auto r = lm("run --model dummy --tasks 'more/*.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|t2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|t3 "), std::string::npos) << r.out;
  r = lm("run --model dummy --tasks 'none/*.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Tasks not found: "), std::string::npos) << r.err;
}

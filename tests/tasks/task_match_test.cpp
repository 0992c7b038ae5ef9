// --tasks globs against the reference's own TaskManager.match_tasks (goldens from
// scripts/gen_task_match_goldens.py): over the names list that ships with lm-eval, and over an
// index of the reference's library (when the active Python environment has it) plus tasks/.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/reference_library.hpp"
#include "lmeval/tasks/task_index.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

namespace {

Json goldens() {
  return Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                "tests/tasks/goldens/match_tasks.json"))["matches"];
}

}  // namespace

TEST(Tasks_MatchTasks, NamesListMatchesAsTheReference) {
  // The list ships in tasks/; the test binary is not beside it (ctest runs it in build/tests).
  ::setenv("LMEVAL_TASKS_DIR", (lmeval::testing::source_dir() / "tasks").c_str(), 1);
  const Json g = goldens();
  ASSERT_GE(g.size(), 10u);
  EXPECT_EQ(g["mmlu_high_school_c*"].size(), 8u);
  for (const auto& [pattern, want] : g.items())
    EXPECT_EQ(Json(lmeval::reference_task_names_matching(pattern)), want) << pattern;
}

TEST(Tasks_MatchTasks, IndexOfTheReferenceLibraryAndBuiltinsMatchesAsTheReference) {
  // The library as a run finds it, else the reference venv of the other golden tests
  // ($LMEVAL_REF_VENV, else .venv-ref in the checkout).
  std::optional<fs::path> dir = lmeval::reference_task_library().dir;
  const char* env = std::getenv("LMEVAL_REF_VENV");
  const fs::path venv = env && *env ? fs::path(env) : lmeval::testing::source_dir() / ".venv-ref";
  for (const char* py : {"lib/python3.11", "lib/python3.12", "lib/python3.13", "lib/python3.10"})
    if (!dir && fs::is_directory(venv / py / "site-packages/lm_eval/tasks"))
      dir = venv / py / "site-packages/lm_eval/tasks";
  if (!dir)
    GTEST_SKIP() << "the reference's task library is not installed ("
                 << lmeval::reference_task_library().described << ", nor in " << venv
                 << "); set LMEVAL_REFERENCE_TASKS to its lm_eval/tasks folder";
  // The roots of a run that asks for a glob (evaluator's task_index_for).
  auto index = lmeval::TaskIndex::build({*dir, lmeval::builtin_tasks_dir()});
  const Json g = goldens();  // kept: a range-for over a temporary's items() would dangle
  for (const auto& [pattern, want] : g.items())
    EXPECT_EQ(Json(index.match(pattern)), want) << pattern;
}

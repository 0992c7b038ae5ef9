// The reference's task_name reads before requests are built, counted from lm_eval 0.4.13's
// TaskManager.load / Group.add / _check_duplicates (see src/evaluator/task_name_draws.hpp); the
// GPQA golden run (tests/e2e) checks the resulting random-stream position against the reference.
#include <gtest/gtest.h>

#include "evaluator/global_random_replay.hpp"
#include "lmeval/core/py_random.hpp"

namespace lmeval {
namespace {

TaskConfig leaf(const std::string& name) {
  TaskConfig c;
  c.raw["task"] = name;
  return c;
}

GroupNode group(const std::string& name, std::vector<std::string> children,
                std::vector<std::string> leaves) {
  GroupNode g;
  g.name = name;
  g.children = std::move(children);
  g.leaves = std::move(leaves);
  return g;
}

TEST(TaskNameDraws, StandaloneTasksAreReadThreeTimesAfterLoading) {
  TaskSelection s;
  s.tasks = {leaf("a"), leaf("b")};
  TaskNameDraws d = task_name_draws(s);
  EXPECT_EQ(d.after_task, (std::vector<size_t>{0, 0}));
  EXPECT_EQ(d.after_all, 6u);
}

TEST(TaskNameDraws, GroupAddsTwoReadsPerDirectTaskWhenComplete) {
  // leaderboard_gpqa: 2 x 3 at Group.add after the third subtask, then collect + duplicates.
  TaskSelection s;
  s.tasks = {leaf("d"), leaf("e"), leaf("m")};
  s.groups = {group("g", {"d", "e", "m"}, {"d", "e", "m"})};
  TaskNameDraws d = task_name_draws(s);
  EXPECT_EQ(d.after_task, (std::vector<size_t>{0, 0, 6}));
  EXPECT_EQ(d.after_all, 6u);
}

TEST(TaskNameDraws, NestedGroupsCountOnlyDirectTaskMembers) {
  // top = [x, inner = [y, z], w]: inner adds y, z after z; top adds x, w after w.
  TaskSelection s;
  s.tasks = {leaf("x"), leaf("y"), leaf("z"), leaf("w"), leaf("solo")};
  s.groups = {group("top", {"x", "inner", "w"}, {"x", "y", "z", "w"}),
              group("inner", {"y", "z"}, {"y", "z"})};
  TaskNameDraws d = task_name_draws(s);
  EXPECT_EQ(d.after_task, (std::vector<size_t>{0, 0, 4, 4, 0}));
  EXPECT_EQ(d.after_all, 4u * 2 + 3);
}

TEST(TaskNameDraws, EachReadIsEightRandomCalls) {
  PyRandom a(0), b(0);
  draw_task_name_reads(a, 3);
  for (int i = 0; i < 24; ++i) b.random();
  EXPECT_EQ(a.random(), b.random());
}

}  // namespace
}  // namespace lmeval

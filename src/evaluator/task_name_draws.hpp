// Where the reference draws from the global random while it builds a run's tasks (task_name reads).
#pragma once

#include <cstddef>
#include <vector>

#include "lmeval/tasks/task_selection.hpp"

namespace lmeval {

class PyRandom;

// The reference's ConfigurableTask.task_name is `getattr(self.config, "task", random_task_id())`:
// the default is evaluated on every read, so each read draws 8 random() from the global random
// (random.choices(k=8)). The reads that happen before requests are built (lm_eval 0.4.13,
// TaskManager.load): Group.add reads it twice per direct task member right after the group's
// members are built (hasattr + the read), then, after every item is built, `collect` reads it
// once per leaf and `_check_duplicates` once per leaf of a group and twice per standalone task.
// Only the position in the random stream matters, since the drawn ids are discarded: it decides
// which shuffle GPQA's later accesses to its documents see.
struct TaskNameDraws {
  std::vector<size_t> after_task;  // reads right after leaf i of selection.tasks is built
  size_t after_all = 0;            // reads after every task is built
};
TaskNameDraws task_name_draws(const TaskSelection& selection);

// `reads` reads of task_name: 8 random() each.
void draw_task_name_reads(PyRandom& rng, size_t reads);

}  // namespace lmeval

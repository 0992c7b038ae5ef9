// The run's Python-global state that task code consumes (the reference's global `random`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace lmeval {

class PyRandom;

// State shared by the tasks of one run that the reference keeps in Python globals: the global
// `random` module (seeded with the first --seed value in simple_evaluate), which e.g. GPQA's
// process_docs consumes. Defined beside the doc functions (lmeval_tasks_functions), the lowest
// library that reads it, so that library need not link lmeval_tasks.
struct TaskContext {
  std::shared_ptr<PyRandom> global_random;
  // The seeds simple_evaluate gives Python's `random` and numpy when Python task code runs in the
  // embedded interpreter (--seed's first two values; unset: not seeded).
  std::optional<int64_t> python_random_seed = 0, numpy_seed = 1234;
};
TaskContext& task_context();

}  // namespace lmeval

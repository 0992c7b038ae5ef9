// The run's Python-global state (tasks/task_context.hpp).
#include "lmeval/tasks/task_context.hpp"

#include "lmeval/core/py_random.hpp"

namespace lmeval {

TaskContext& task_context() {
  static TaskContext ctx{std::make_shared<PyRandom>(0)};
  return ctx;
}

}  // namespace lmeval

// The run's Python-global state (tasks/task_context.hpp).
#include "lmeval/tasks/task_context.hpp"

#include <mutex>

#include "lmeval/core/py_random.hpp"

namespace lmeval {

namespace {

// Where the global random's state is now: the interpreter holds it after a call into Python,
// until C++ code draws or replaces it.
struct RandomHandover {
  std::mutex mu;
  std::function<void(const PyRandom&)> to_python;
  std::function<void(PyRandom&)> from_python;
  bool python_holds = false;
};

RandomHandover& handover() {
  static RandomHandover h;
  return h;
}

// With handover().mu held.
PyRandom& take_back() {
  auto& ctx = task_context();
  if (!ctx.global_random) ctx.global_random = std::make_shared<PyRandom>(0);
  auto& h = handover();
  if (h.python_holds) {
    h.from_python(*ctx.global_random);
    h.python_holds = false;
  }
  return *ctx.global_random;
}

}  // namespace

TaskContext& task_context() {
  static TaskContext ctx{std::make_shared<PyRandom>(0)};
  return ctx;
}

PyRandom& global_random() {
  std::lock_guard<std::mutex> lock(handover().mu);
  return take_back();
}

std::shared_ptr<PyRandom> global_random_ptr() {
  std::lock_guard<std::mutex> lock(handover().mu);
  take_back();
  return task_context().global_random;
}

void set_global_random(std::shared_ptr<PyRandom> rng) {
  std::lock_guard<std::mutex> lock(handover().mu);
  task_context().global_random = std::move(rng);
  handover().python_holds = false;
}

void global_random_to_python() {
  auto& h = handover();
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.python_holds || !h.to_python) return;
  auto& ctx = task_context();
  if (!ctx.global_random) ctx.global_random = std::make_shared<PyRandom>(0);
  h.to_python(*ctx.global_random);
  h.python_holds = true;
}

void connect_global_random_to_python(std::function<void(const PyRandom&)> to_python,
                                     std::function<void(PyRandom&)> from_python) {
  auto& h = handover();
  std::lock_guard<std::mutex> lock(h.mu);
  h.to_python = std::move(to_python);
  h.from_python = std::move(from_python);
  h.python_holds = false;
}

}  // namespace lmeval

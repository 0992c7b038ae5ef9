// The run's Python-global state that task code consumes (the reference's global `random`).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace lmeval {

class PyRandom;

// State shared by the tasks of one run that the reference keeps in Python globals: the global
// `random` module (seeded with the first --seed value in simple_evaluate), which e.g. GPQA's
// process_docs consumes. Defined beside the doc functions (lmeval_tasks_functions), the lowest
// library that reads it, so that library need not link lmeval_tasks.
struct TaskContext {
  // C++ code reads and replaces it through global_random() / set_global_random() only, so that
  // Python task code and C++ code draw from one stream.
  std::shared_ptr<PyRandom> global_random;
  // The seeds simple_evaluate gives Python's `random` and numpy when Python task code runs in the
  // embedded interpreter (--seed's first two values; unset: not seeded).
  std::optional<int64_t> python_random_seed = 0, numpy_seed = 1234;
};
TaskContext& task_context();

// The reference has one global `random`; here C++ ports and replays draw from a PyRandom and
// Python task code from the embedded interpreter's `random` module. The state lives on one side
// at a time and moves to the other side when that side draws next, so both see one stream.
//
// The generator as C++ code must draw from it: takes the state back from the interpreter when
// Python code ran since C++ last drew.
PyRandom& global_random();
// Replaces it (a new seed, or a saved state restored); the interpreter gets it before its next
// call.
void set_global_random(std::shared_ptr<PyRandom> rng);
// The generator object now (after taking the state back from the interpreter), to keep it.
std::shared_ptr<PyRandom> global_random_ptr();
// Called by the embedded interpreter's runtime before every call into Python: hands it the
// state when C++ code drew or replaced it since. `to_python` / `from_python` copy the state into
// and out of the interpreter's `random` (installed once, when it starts).
void global_random_to_python();
void connect_global_random_to_python(std::function<void(const PyRandom&)> to_python,
                                     std::function<void(PyRandom&)> from_python);

}  // namespace lmeval

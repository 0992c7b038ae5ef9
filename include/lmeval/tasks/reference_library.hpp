// The reference's own task library (PyPI lm-eval's lm_eval/tasks) in the user's active Python
// environment, so that its tasks run by name as in the reference (issue 15, point 5).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmeval {

struct ReferenceLibrary {
  std::optional<std::filesystem::path> dir;  // its lm_eval/tasks folder, when found
  std::string described;                     // where it was looked for (for messages)
  // dir is `lm-eval download --task-library`'s copy (task_library_download.hpp): its Python
  // helpers have no environment with the reference's dependencies.
  bool downloaded = false;
};

// Found once per process: $LMEVAL_REFERENCE_TASKS (a folder, or "off"), else
// $VIRTUAL_ENV/lib*/python3*/site-packages/lm_eval/tasks, else where python3 on PATH finds the
// lm_eval package (importlib.util.find_spec: nothing is imported; at most 10 s); else, when
// $LMEVAL_REFERENCE_TASKS is unset, the copy `lm-eval download --task-library` made.
const ReferenceLibrary& reference_task_library();

// Whether `name` is a task, group or tag of the reference's library (lm-eval 0.4.13, listed in
// tasks/reference_library_names.txt by scripts/gen_reference_task_names.py).
bool is_reference_task_name(const std::string& name);
// The names of that list that `pattern` matches as the reference's utils.pattern_match does
// (fnmatch), in the list's order.
std::vector<std::string> reference_task_names_matching(const std::string& pattern);

}  // namespace lmeval

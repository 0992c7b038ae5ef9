// `validate`: every check that needs no model, reported all at once (lm-eval's extension of the
// reference's name-only check).
#pragma once

#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"

namespace lmeval {

struct ValidationReport {
  std::vector<UserError> problems;
  std::vector<std::string> notes;  // e.g. "data for X not available locally: rendering skipped"
  size_t tasks_checked = 0;
  size_t docs_rendered = 0;
};

class Task;

// UserError when a task's evaluation split has no documents (an empty data file, or
// process_docs dropped every row), naming the task, the split and its data files. `run` and
// `validate` both check through here.
void require_documents(const Task& task);

// Config-file problems already collected by the caller can be passed in `report`.
void validate_run(const EvalConfig& cfg, ValidationReport& report);

}  // namespace lmeval

// The object of a class task (`class: !function module.Class` in its YAML, the reference's
// PY_TASK): a native port of that class when its module file next to the YAML has a registered
// source (scripts/gen_function_sources.py: the same rule as `!function` helpers), else the
// reference's own class in the embedded interpreter (python_functions.hpp).
#pragma once

#include <memory>
#include <string>

#include "lmeval/data/data_source.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_config.hpp"

namespace lmeval {

// Builds the object of cfg (cfg.python_class set), where the reference's TaskManager builds it.
// A native port reads its documents from `data`; the Python class reads them itself, from
// `data_dir` where that holds them (python_class_task). Throws as python_class_task does, and
// UserError when the module's source is registered but not this class of it.
std::shared_ptr<PythonClassTask> make_class_task(const TaskConfig& cfg, DataSource& data,
                                                 const std::string& data_dir);

}  // namespace lmeval

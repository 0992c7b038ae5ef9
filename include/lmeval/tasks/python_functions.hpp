// `!function`s that run Python: the reference's helper modules with no C++ port of their exact
// source, called in the embedded interpreter of the user's active environment (the
// liblmeval_python.so plugin, opened and started only when such a function is first resolved).
#pragma once

#include <string>

#include "lmeval/core/embedded_python.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_config.hpp"

namespace lmeval {

// The TaskFunction calling the Python function a bound reference names ("python_module": see
// bind_function_sources), imported once per process. UserError (exit 2) at the `!function`'s file
// and line when Python cannot run it: no plugin (built without Python), no Python environment, a
// Python version other than the plugin's, or an import that fails.
const TaskFunction& python_task_function(const Json& ref);

// The metric `name` of the Python `evaluate` package (evaluate.load(name).compute, loaded on its
// first call), as the reference's get_metric gives it for `hf_evaluate: true` or a name its
// registry lacks; only its `metric` callable is set. UserError at `where` when Python cannot run
// or `evaluate` is not importable.
const TaskFunction& python_evaluate_metric(const std::string& name, const SourceLocation& where);

// The object of a Python-class task (cfg.python_class: `class: !function module.Class`), built in
// the embedded interpreter as the reference's TaskFactory builds it (its own YAML read by the
// reference's loader, `lm_eval` imported from the active environment); its datasets are read from
// `data_dir` where that holds them (the --data_dir layout), else as the class reads them. UserError
// (exit 2) naming the task and the `class:` line when Python cannot run, `lm_eval` does not import
// or the class raises (the exception and its last frame); RuntimeError (exit 1) when its data
// cannot be reached from this machine. Its calls raise the same way.
struct PythonClassSpec {
  Json class_ref;  // the `class:` reference (file and line of its YAML)
  std::string task, yaml;
  Json overrides, metadata;  // TaskConfig::python_class_overrides / python_class_metadata
  std::string data_dir;
};
std::shared_ptr<PythonClassTask> python_class_task(const PythonClassSpec& spec);

// The spec of a Python-class task's config (inline: lmeval_tasks, which holds TaskConfig, links
// this library, not the other way round).
inline PythonClassSpec python_class_spec(const TaskConfig& cfg, std::string data_dir) {
  return {cfg.python_class,          cfg.name(),
          cfg.source.path.string(),  cfg.python_class_overrides,
          cfg.python_class_metadata, std::move(data_dir)};
}

// Lets filter_list entries whose filter class or `custom` filter_fn is Python run it
// (filters::set_python_filter_factory); called when the built-in task functions register.
void install_python_filters();

}  // namespace lmeval

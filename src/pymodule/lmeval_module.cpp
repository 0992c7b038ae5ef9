// The C++ half of the lm_eval_cpp Python package (python/lm_eval_cpp): a run from a JSON object
// of run keys (the YAML keys of `--config`, run_options.hpp) and the task index, for the
// package's simple_evaluate and TaskManager. JSON crosses the boundary as text, so the results
// keep their key order and nothing here knows Python's types.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/run_options.hpp"
#include "lmeval/core/embedded_python.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/tasks/task_index.hpp"

namespace py = pybind11;

namespace lmeval {

namespace {

// Each key as a --config YAML would set it: the run flag table's checks and messages apply.
EvalConfig config_from_keys(const Json& keys) {
  if (!keys.is_object()) throw UserError("the run settings must be a JSON object");
  EvalConfig cfg;
  for (auto it = keys.begin(); it != keys.end(); ++it) {
    const RunOption* o = find_run_option(it.key());
    if (!o || !o->from_yaml)
      throw UserError("unknown run setting '" + it.key() + "'",
                      {"", 0, 0, "simple_evaluate(" + it.key() + "=...)"},
                      "one of the keys of an eval.yaml (docs/cli.md)");
    o->from_yaml(cfg, it.value(), {"", 0, 0, "simple_evaluate(" + it.key() + "=...)"});
  }
  // EvaluatorConfig._configure's demand for an output path with log_samples is the CLI's (it
  // writes the samples); simple_evaluate returns them instead. A stand-in path satisfies it
  // and is removed: evaluate() writes no file.
  const bool no_output = !cfg.output_path;
  if (no_output) cfg.output_path = "<returned to Python>";
  cfg.finalize();
  if (no_output) cfg.output_path.reset();
  return cfg;
}

// (results as JSON text, [(task, samples as a JSON array text)]).
std::pair<std::string, std::vector<std::pair<std::string, std::string>>> run(
    const std::string& keys_json) {
  EvalConfig cfg = config_from_keys(Json::parse(keys_json));
  EvalOutput out;
  {
    // The model phase runs without the GIL: a training loop's other threads go on.
    py::gil_scoped_release release;
    out = evaluate(cfg);
  }
  std::vector<std::pair<std::string, std::string>> samples;
  for (const auto& s : out.samples) samples.emplace_back(s.task, Json(s.lines).dump());
  return {out.results.dump(), samples};
}

// The reference's TaskManager index: every name, and the task, group and tag names.
std::map<std::string, std::vector<std::string>> index_names(
    const std::vector<std::string>& include_path, bool include_defaults) {
  std::vector<std::filesystem::path> roots;
  EvalConfig cfg;
  std::string joined;
  for (const auto& p : include_path) joined += (joined.empty() ? "" : ":") + p;
  if (!joined.empty()) cfg.include_path = joined;
  TaskIndex index = include_defaults ? task_index_for(cfg, {}, /*always_reference=*/true)
                                     : TaskIndex::build({include_path.begin(), include_path.end()});
  return {{"all_tasks", index.all_names()},
          {"all_subtasks", index.names_of(IndexKind::Task)},
          {"all_groups", index.names_of(IndexKind::Group)},
          {"all_tags", index.names_of(IndexKind::Tag)}};
}

}  // namespace

}  // namespace lmeval

PYBIND11_MODULE(_lmeval, m) {
  m.doc() = "lm-eval's C++ evaluator (use the lm_eval_cpp package, not this module)";
  lmeval::register_builtins();
  // This process is a Python interpreter: the embedded one (liblmeval_python.so, another
  // libpython) must not start inside it.
  lmeval::refuse_embedded_python(
      "inside a Python process (the lm_eval_cpp package) lm-eval does not start its embedded "
      "Python: tasks whose helpers have no C++ port, Python-class tasks and the hf transformers "
      "path run with the `lm-eval` command instead");
  static py::exception<lmeval::UserError> user_error(m, "UserError", PyExc_ValueError);
  // NOLINTNEXTLINE(performance-unnecessary-value-param): pybind11 takes void(std::exception_ptr)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const lmeval::UserError& e) {
      user_error(e.what());
    } catch (const lmeval::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const nlohmann::json::exception& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("evaluate", &lmeval::run, py::arg("keys_json"),
        "Runs an evaluation; returns (results JSON, [(task, samples JSON)])");
  m.def("index_names", &lmeval::index_names, py::arg("include_path"), py::arg("include_defaults"),
        "The task index's names: all_tasks, all_subtasks, all_groups, all_tags");
  m.attr("__version__") = LMEVAL_VERSION_STRING;
}

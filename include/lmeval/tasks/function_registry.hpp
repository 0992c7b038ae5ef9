// The `!function` registry: C++ implementations of the reference's task utils under their YAML
// names.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"

namespace lmeval {

// One registered function; exactly one of the callables is set (gold_choices only beside
// process_results).
struct TaskFunction {
  // process_docs(split) -> split
  std::function<std::vector<Json>(std::vector<Json>)> process_docs;
  // doc_to_text / doc_to_target / doc_to_choice / gen_prefix (doc) -> value
  std::function<Json(const Json&)> doc_fn;
  // process_results(doc, filtered responses of the doc's instances) -> {metric: value}
  std::function<Json(const Json&, const std::vector<Json>&)> process_results;
  // Beside the process_results of a multiple_choice task: the indices of the doc's correct choices
  // (TruthfulQA MC2: every answer labelled true). A task function scores itself, so doc_to_target
  // need not name its golds; this lets --continuous_metrics score it too. Unset: those metrics skip
  // it.
  std::function<std::vector<size_t>(const Json&)> gold_choices;
  // aggregation(per-document values) -> number
  std::function<double(const std::vector<Json>&)> aggregation;
  // A `metric: !function` callable scoring one generation (gold, result, the metric_list entry's
  // other keys, multiple_target) as the reference's generate_until branch calls it -> a value or
  // {key: value}
  std::function<Json(const Json&, const Json&, const Json&, bool)> metric;
  // custom_dataset(metadata, dataset_kwargs) -> {split: rows}
  std::function<std::map<std::string, std::vector<Json>>(const Json&, const Json&)> custom_dataset;
  // the callable's own name (__name__): what the reference names a metric function's scores
  std::string name;
  // what the results' `configs` show for it (the reference shows the Python source)
  std::string display;
  // what the results' fewshot_config and filter_list show for it (the reference shows repr(fn)
  // there); empty:
  // `display`
  std::string repr;
  // process_docs draws from the run's global `random` (GPQA's answer shuffle). The reference
  // re-runs process_docs on every access to a task's documents, so such a function gives
  // different documents at each access and Task::reaccess_eval_docs must replay those accesses.
  bool draws_global_random = false;
  // Python process_docs: whether its last call advanced a generator (the global `random`, numpy's
  // global one, or one its module holds, as gpqa n_shot's `rng`); a function that did is treated
  // as draws_global_random (re-run at every access).
  std::function<bool()> last_call_drew_global_random;
  // Python process_results: its last scores as the reference's samples file writes them
  // (json.dumps with handle_non_serializable: numpy scalars as Python's, a set as a list, anything
  // else, a numpy array among them, as its str()); null when that is their plain JSON.
  std::function<Json()> last_results_as_written;
};

class FunctionRegistry {
 public:
  static FunctionRegistry& instance();
  // `name` is the YAML text (`utils.process_docs`); `family` the folder of the YAML that names it
  // (`hellaswag`), so two families may each have their own `utils.process_docs`.
  void add(const std::string& family, const std::string& name, TaskFunction fn);
  // Lookup by family first, then by a family-less registration.
  const TaskFunction* find(const std::string& family, const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, TaskFunction> fns_;
};

// Fills the registry with every built-in doc function (idempotent).
void register_builtin_task_functions();

// Resolves a function reference made by the YAML loader ({"!function": ..., "dir": ...}, "dir"
// bound by bind_function_sources); throws UserError at the file and line of the tag when unknown,
// or when the reference's module needs Python ("python_module": see throw_needs_python).
const TaskFunction& resolve_function_ref(const Json& ref);

// The UserError (exit 2) for a reference bound to no C++ port: names the function, its module
// file and the YAML file and line.
[[noreturn]] void throw_needs_python(const Json& ref);

}  // namespace lmeval

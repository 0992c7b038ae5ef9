// The interface between lm-eval and its embedded-CPython plugin (liblmeval_python.so), which runs
// the reference's Python task helpers (`!function` targets with no C++ port of their source) and,
// for the hf backend, models through transformers itself (the models-side calls below). Neutral:
// tasks and models each use their own calls of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

// Bumped whenever this struct or the meaning of a call changes; the plugin's abi string is
// "<lm-eval version>/<kPythonPluginAbi>" and a plugin built from other sources is refused.
inline constexpr int kPythonPluginAbi = 9;

// The Python environment the helpers run in, as that environment's own interpreter reports it
// (sys.executable, prefixes, sys.path and its standard library's folders). The embedded
// interpreter keeps its own standard library (the extension modules of another patch release's
// lib-dynload need private functions of that release) and imports everything else from the
// environment's sys.path.
struct PythonEnvironment {
  std::string executable;
  std::string prefix, exec_prefix;
  std::vector<std::string> path;
  std::vector<std::string> stdlib;  // sysconfig's stdlib and platstdlib
  int major = 0, minor = 0;
};

// How a call hands its arguments to the function (the reference's call of each hook).
enum class PythonCall : int {
  doc = 0,              // fn(doc) (doc_to_text/target/choice, gen_prefix); fn() when it takes none
                        // or doc is null (fewshot_config.samples).
                        // *out is [result, doc]: doc is the dict after the call when the function
                        // changed it in place, else null
  process_docs = 1,     // fn(datasets.Dataset of the rows) -> [rows, drew]: drew is whether
                        // the call advanced the global `random`, numpy's global generator or a
                        // generator held in a global of fn's module
  process_results = 2,  // fn(doc, results); [ll, is_greedy] pairs passed as tuples. *out is
                        // [scores, written]: written is the scores as the reference's samples
                        // file writes them (handle_non_serializable), null when the same
  aggregation = 3,      // fn(list of per-document values) -> number
  filter = 4,           // fn(resps, docs): a `custom` filter's function
  filter_apply = 5,     // fn.apply(resps, docs): an instance of a filter class
  // a `metric: !function` callable as ConfigurableTask.process_results calls it for
  // generate_until: args [gold, result, kwargs, multiple_target, name] -> number, list or dict
  metric = 6,
  // custom_dataset: fn(**metadata, **dataset_kwargs) (args [metadata, dataset_kwargs]) ->
  // {split: [rows]}
  custom_dataset = 7,
};

// Starts the error of a custom_dataset call that failed because its data cannot be reached from
// this machine (an OSError in the exception's chain: offline, not cached): a runtime failure, not
// a fault of the task.
inline constexpr const char* kPythonDataUnavailable = "data unavailable: ";

// Starts the error of a transformers model that could not be built because the environment lacks
// packages it needs (torch, transformers, peft, ...): the names follow, with their import errors.
inline constexpr const char* kPythonMissingPackages = "missing packages: ";

// Renders a chat history (*messages: a list of {role, content}) with the run's chat template, for
// a Python-class task's build_all_requests (the reference passes lm.apply_chat_template): false
// plus *error when it fails. `ctx` is the caller's.
using PythonChatRender = bool (*)(void* ctx, const Json* messages, bool add_generation_prompt,
                                  std::string* out, std::string* error);

// A generation's stopping test, called by a transformers model's generate after each step for
// every unfinished row with its new tokens so far: true finishes the row. `ctx` is the caller's.
using PythonStopTest = bool (*)(void* ctx, std::size_t row, const std::int32_t* tokens,
                                std::size_t n);

// No C++ exception crosses the boundary: failures come back as false plus a message.
struct PythonPluginApi {
  const char* abi;
  // PY_MAJOR_VERSION * 100 + PY_MINOR_VERSION of the libpython the plugin links.
  int python_version;
  // Starts the interpreter in `env` (once per process: core/embedded_python.hpp).
  bool (*start)(const PythonEnvironment* env, std::string* error);
  // Seeds `random` and numpy's global generator as the reference's simple_evaluate does when the
  // seeds are >= 0 (task code's, once, before its first call).
  bool (*seed)(long long random_seed, long long numpy_seed, std::string* error);
  // The function `qualified` (`utils.fn`) of the module file `module_path`, imported as the
  // reference's lm_eval/tasks/_yaml_loader.py imports it; null plus *error when that fails.
  // *display and *repr: what the reference shows for it in a results file's configs (its source)
  // and fewshot_config (repr(fn)); *name: its __name__ (a metric function's results are named
  // after it).
  void* (*function)(const char* module_path, const char* qualified, std::string* display,
                    std::string* repr, std::string* name, std::string* error);
  // A callable over the `evaluate` package's metric `name` (evaluate.load on its first call);
  // null plus *error when `evaluate` does not import.
  void* (*evaluate_metric)(const char* name, std::string* error);
  // cls(**kwargs): an instance of a filter class; null plus *error when it raises.
  void* (*instantiate)(void* cls, const Json* kwargs, std::string* error);
  bool (*call)(void* fn, PythonCall kind, const Json* args, std::size_t nargs, Json* out,
               std::string* error);
  // random.getstate()'s 624 words and position (625 values) / random.setstate with them (its
  // gauss_next kept): the global `random` that lm-eval's C++ code shares with Python task code.
  bool (*get_random_state)(std::uint32_t* state625, std::string* error);
  bool (*set_random_state)(const std::uint32_t* state625, std::string* error);
  // A Python-class task (`class: !function module.Class`), built as the reference's TaskFactory
  // builds it from *spec {yaml, task, overrides, metadata, data_dir} (lm_eval must import in the
  // environment); null plus *error (kPythonDataUnavailable first when its data cannot be reached).
  void* (*class_task)(const Json* spec, std::string* error);
  // One call of that task: `method` is "configure" (simple_evaluate's settings), "build"
  // (build_all_requests -> [[request_type, doc_id, idx, arguments, repeats]], the Instances kept
  // under kwargs' `pass`) or "score" (the responses of pass `pass` -> {results, config, version,
  // num_fewshot, higher_is_better, n_samples, samples}), `kwargs` its keyword arguments. `render`
  // (null when the run has no chat template) becomes build's `chat_template` callable.
  bool (*class_task_call)(void* task, const char* method, const Json* kwargs,
                          PythonChatRender render, void* render_ctx, Json* out, std::string* error);

  // Models. A transformers model built from *spec (the hf backend's model_args as the reference's
  // HFLM reads them: models/hf/python_model.cpp) by the plugin's transformers_model.py, which
  // imports torch and transformers; null plus *error when it cannot. *info: what the model and
  // its tokenizer say of themselves.
  void* (*transformers_model)(const Json* spec, Json* info, std::string* error);
  // One call of that model: `method` is "score" (right-padded rows of tokens and spans scored
  // from their logits), "generate" (model.generate over left-padded prompts, `stop` tested after
  // every step), "encode", "decode" or "chat" (its AutoTokenizer, when lm-eval reads none of the
  // folder's tokenizer files); `kwargs` its keyword arguments.
  bool (*transformers_call)(void* model, const char* method, const Json* kwargs,
                            PythonStopTest stop, void* stop_ctx, Json* out, std::string* error);
};

}  // namespace lmeval

// The plugin's one exported symbol.
extern "C" const lmeval::PythonPluginApi* lmeval_python_plugin_api();

// Python `!function`s through the embedded-interpreter plugin (see python_functions.hpp).
#include "lmeval/tasks/python_functions.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>

#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/embedded_python.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/python_plugin_api.hpp"
#include "lmeval/core/stop_signal.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/task_context.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

SourceLocation where_of(const Json& ref) {
  return {ref.value("file", ""), ref.value("line", 0), 0, "!function"};
}

// What a guarded call names when the helper crashes, hangs or keeps a stop from ending the run:
// the YAML file and line, the function and its module file.
std::string helper_what(const SourceLocation& where, const std::string& function,
                        const std::string& module) {
  SourceLocation at = where;
  at.field.clear();
  std::string w = at.to_string() + ": `!function " + function + "`";
  if (!module.empty()) w += " (" + module + ")";
  return w;
}

struct Runtime {
  const PythonPluginApi* api = nullptr;
  std::string failure;  // why Python cannot run (set once)
};

// The embedded interpreter (core/embedded_python.hpp), seeded for task code once per process:
// `random` and numpy's global generator as the reference's simple_evaluate seeds them, and the
// one global `random` that C++ and Python task code share (task_context.hpp) connected to it.
Runtime& runtime(const Json& ref) {
  static Runtime rt;
  static std::once_flag once;
  std::call_once(once, [&] {
    const EmbeddedPython& py = embedded_python();
    if (!py.api) {
      rt.failure = py.failure;
      return;
    }
    const PythonPluginApi* api = py.api;
    const auto& ctx = task_context();
    std::string error;
    if (!api->seed(ctx.python_random_seed.value_or(-1), ctx.numpy_seed.value_or(-1), &error)) {
      rt.failure = "the embedded Python (" + py.described + ") could not be seeded: " + error;
      return;
    }
    rt.api = api;
    connect_global_random_to_python(
        [api](const PyRandom& rng) {
          const PyRandom::State st = rng.state();
          std::string err;
          if (!api->set_random_state(st.data(), &err))
            throw RuntimeError("the embedded Python's random.setstate failed: " + err);
        },
        [api](PyRandom& rng) {
          PyRandom::State st;
          std::string err;
          if (!api->get_random_state(st.data(), &err))
            throw RuntimeError("the embedded Python's random.getstate failed: " + err);
          rng.set_state(st);
        });
  });
  (void)ref;
  return rt;
}

// The TaskFunction of one Python function: every hook calls the same function, with the
// arguments the reference gives that hook.
TaskFunction make_function(const PythonPluginApi* api, void* fn, const Json& ref,
                           std::string display, std::string py_name) {
  const std::string name = function_ref_name(ref);
  const SourceLocation where = where_of(ref);
  // args: the call's arguments side by side, read in place (a document is not copied per call).
  const std::string what = helper_what(where, name, ref.value("python_module", ""));
  auto invoke = [api, fn, name, where, what](PythonCall kind, const Json* args, std::size_t nargs) {
    Json out;
    std::string error;
    global_random_to_python();
    bool ok;
    {
      GuardedCall guard(what, python_call_timeout_s());
      ok = api->call(fn, kind, args, nargs, &out, &error);
    }
    // A stop during the call is the run's end, whatever the helper made of it.
    throw_if_stopped();
    if (!ok)
      throw UserError("`!function " + name + "` raised " + error, where,
                      "a function that runs on the task's documents without raising");
    return out;
  };
  TaskFunction f;
  f.display = std::move(display);
  // A helper that changed its document in place changes lm-eval's copy too, as the reference's
  // hooks share one dict per document (python_plugin_api.hpp, PythonCall::doc). Documents are
  // stored non-const (Task::load), and nothing reads them concurrently.
  f.doc_fn = [invoke](const Json& doc) {
    Json out = invoke(PythonCall::doc, &doc, 1);
    if (!out[1].is_null()) const_cast<Json&>(doc) = std::move(out[1]);
    return std::move(out[0]);
  };
  auto drew = std::make_shared<bool>(false);
  f.process_docs = [invoke, name, where, drew](std::vector<Json> rows) {
    Json arr = Json::array();
    for (auto& r : rows) arr.push_back(std::move(r));
    Json res = invoke(PythonCall::process_docs, &arr, 1);
    Json& out = res.at(0);
    *drew = res.at(1).get<bool>();
    std::vector<Json> docs;
    docs.reserve(out.size());
    for (auto& d : out) {
      if (!d.is_object())
        throw UserError("`!function " + name + "` returned a document that is not a mapping", where,
                        "process_docs returning a Dataset or a list of dicts");
      docs.push_back(std::move(d));
    }
    return docs;
  };
  f.last_call_drew_global_random = [drew] { return *drew; };
  auto written = std::make_shared<Json>();
  f.last_results_as_written = [written] { return *written; };
  f.process_results = [invoke, name, where, written](const Json& doc,
                                                     const std::vector<Json>& results) {
    const Json args[2] = {doc, Json(results)};
    Json both = invoke(PythonCall::process_results, args, 2);
    Json out = std::move(both.at(0));
    *written = std::move(both.at(1));
    if (!out.is_object())
      throw UserError("`!function " + name + "` returned " + std::string(out.type_name()) +
                          ", not a dict of metric values",
                      where, "process_results(doc, results) returning {metric: value}");
    return out;
  };
  f.metric = [invoke, py_name](const Json& gold, const Json& result, const Json& kwargs,
                               bool multiple_target) {
    const Json args[5] = {gold, result, kwargs, Json(multiple_target), Json(py_name)};
    return invoke(PythonCall::metric, args, 5);
  };
  f.custom_dataset = [api, fn, name, where, what](const Json& metadata,
                                                  const Json& dataset_kwargs) {
    Json args[2] = {metadata, dataset_kwargs};
    Json out;
    std::string error;
    bool ok;
    {
      GuardedCall guard(what, python_call_timeout_s());
      ok = api->call(fn, PythonCall::custom_dataset, args, 2, &out, &error);
    }
    throw_if_stopped();
    if (!ok) {
      const std::string flag = kPythonDataUnavailable;
      if (error.rfind(flag, 0) == 0)
        throw RuntimeError(where.to_string() + ": `!function " + name +
                           "` could not reach its data from here: " + error.substr(flag.size()));
      throw UserError("`!function " + name + "` raised " + error, where,
                      "a custom_dataset function that returns the task's splits without raising");
    }
    if (!out.is_object())
      throw UserError("`!function " + name + "` returned " + std::string(out.type_name()), where,
                      "custom_dataset returning a DatasetDict or {split: rows}");
    std::map<std::string, std::vector<Json>> splits;
    for (auto it = out.begin(); it != out.end(); ++it) {
      auto& rows = splits[it.key()];
      for (auto& d : it.value()) {
        if (!d.is_object())
          throw UserError("`!function " + name + "` returned a row of split '" + it.key() +
                              "' that is not a mapping",
                          where, "custom_dataset returning a DatasetDict or {split: rows}");
        rows.push_back(std::move(d));
      }
    }
    return splits;
  };
  f.name = std::move(py_name);
  f.aggregation = [invoke, name, where](const std::vector<Json>& values) {
    Json arr(values);
    Json out = invoke(PythonCall::aggregation, &arr, 1);
    if (!out.is_number())
      throw UserError(
          "`!function " + name + "` returned " + std::string(out.type_name()) + ", not a number",
          where, "an aggregation returning a number");
    return out.get<double>();
  };
  return f;
}

// The Python object behind each TaskFunction this file made (filters call it directly).
std::mutex g_handles_mu;
std::map<const TaskFunction*, void*>& handles() {
  static std::map<const TaskFunction*, void*> h;
  return h;
}
void* handle_of(const TaskFunction& fn) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  return handles().at(&fn);
}

Json docs_array(const std::vector<const Json*>& docs) {
  Json out = Json::array();
  for (const Json* d : docs) out.push_back(d ? *d : Json());
  return out;
}

// A filter whose code is Python: an instance of a filter class (its apply) or a `custom` filter's
// filter_fn, called with every instance's responses and documents as FilterEnsemble calls it.
class PythonFilter : public Filter {
 public:
  PythonFilter(const PythonPluginApi* api, void* target, PythonCall kind, std::string name,
               SourceLocation where)
      : api_(api), target_(target), kind_(kind), name_(std::move(name)), where_(std::move(where)) {}
  std::vector<Json> apply(std::vector<Json> resps,
                          const std::vector<const Json*>& docs) const override {
    Json args[2] = {Json(std::move(resps)), docs_array(docs)};
    Json out;
    std::string error;
    global_random_to_python();
    bool ok;
    {
      GuardedCall guard("filter " + helper_what(where_, name_, ""), python_call_timeout_s());
      ok = api_->call(target_, kind_, args, 2, &out, &error);
    }
    throw_if_stopped();
    if (!ok)
      throw UserError("filter `!function " + name_ + "` raised " + error, where_,
                      "a filter that runs on the task's responses without raising");
    if (!out.is_array() || out.size() != args[1].size())
      throw UserError("filter `!function " + name_ + "` returned " +
                          (out.is_array() ? std::to_string(out.size()) + " entries"
                                          : std::string(out.type_name())) +
                          " for " + std::to_string(args[1].size()) + " instances",
                      where_, "one filtered response list per instance");
    std::vector<Json> v;
    v.reserve(out.size());
    for (auto& x : out) v.push_back(std::move(x));
    return v;
  }

 private:
  const PythonPluginApi* api_;
  void* target_;
  PythonCall kind_;
  std::string name_;
  SourceLocation where_;
};

}  // namespace

const TaskFunction& python_evaluate_metric(const std::string& name, const SourceLocation& where) {
  static std::mutex mu;
  static std::map<std::string, TaskFunction> loaded;
  Runtime& rt = runtime(Json());
  if (!rt.api)
    throw UserError("metric '" + name + "' comes from the Python `evaluate` package: " + rt.failure,
                    where, "a metric of lm-eval's registry (`lm-eval ls metrics`)");
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(name); it != loaded.end()) return it->second;
  std::string error;
  void* fn;
  {
    GuardedCall guard(where.to_string() + ": the `evaluate` package's metric '" + name + "'",
                      python_call_timeout_s());
    fn = rt.api->evaluate_metric(name.c_str(), &error);
  }
  throw_if_stopped();
  if (!fn)
    throw UserError("metric '" + name +
                        "' comes from the Python `evaluate` package, which does not import in "
                        "the active environment: " +
                        error,
                    where, "`pip install evaluate` in the active environment");
  Json ref = {
      {"!function", "evaluate.load('" + name + "')"}, {"file", where.file}, {"line", where.line}};
  TaskFunction f = make_function(rt.api, fn, ref, "", name);
  TaskFunction only;
  only.metric = std::move(f.metric);
  only.name = name;
  return loaded.emplace(name, std::move(only)).first->second;
}

void install_python_filters() {
  set_python_filter_factory([](const Json& ref, const Json& kwargs, const SourceLocation& where,
                               bool is_class) -> std::unique_ptr<Filter> {
    const TaskFunction& fn = python_task_function(ref);
    const PythonPluginApi* api = runtime(ref).api;
    void* handle = handle_of(fn);
    const std::string name = function_ref_name(ref);
    SourceLocation at = where_of(ref);
    at.field = where.field.empty() ? "!function" : where.field;
    if (!is_class) return std::make_unique<PythonFilter>(api, handle, PythonCall::filter, name, at);
    // The reference's build_filter_ensemble: the class called with the entry's other keys.
    std::string error;
    global_random_to_python();
    void* instance;
    {
      GuardedCall guard("filter class " + helper_what(at, name, ref.value("python_module", "")),
                        python_call_timeout_s());
      instance = api->instantiate(handle, &kwargs, &error);
    }
    throw_if_stopped();
    if (!instance)
      throw UserError("filter class `!function " + name + "` raised " + error, at,
                      "keyword arguments the filter class accepts");
    return std::make_unique<PythonFilter>(api, instance, PythonCall::filter_apply, name, at);
  });
}

namespace {

// The reference's Task object of a Python-class task, called through the plugin.
class EmbeddedClassTask : public PythonClassTask {
 public:
  EmbeddedClassTask(const PythonPluginApi* api, void* handle, std::string task, std::string cls,
                    SourceLocation where)
      : api_(api),
        handle_(handle),
        task_(std::move(task)),
        cls_(std::move(cls)),
        where_(std::move(where)) {}
  using PythonClassTask::call;
  Json call(const std::string& method, const Json& kwargs, const Chat* chat) override {
    Json out;
    std::string error;
    global_random_to_python();
    // A failure of the chat rendering (no template, a template error) is rethrown as it was.
    struct RenderCtx {
      const Chat* chat;
      std::exception_ptr failure;
    } ctx{chat, nullptr};
    auto render = [](void* c, const Json* messages, bool add_generation_prompt, std::string* text,
                     std::string* err) {
      auto* rc = static_cast<RenderCtx*>(c);
      try {
        *text = (*rc->chat)(*messages, add_generation_prompt);
        return true;
      } catch (const std::exception& e) {
        if (!rc->failure) rc->failure = std::current_exception();
        *err = e.what();
        return false;
      }
    };
    bool ok;
    {
      GuardedCall guard(
          where_.to_string() + ": task " + task_ + " (class `" + cls_ + "`), its " + method,
          python_call_timeout_s());
      ok = api_->class_task_call(handle_, method.c_str(), &kwargs, chat ? +render : nullptr, &ctx,
                                 &out, &error);
    }
    throw_if_stopped();
    if (ctx.failure) std::rethrow_exception(ctx.failure);
    if (!ok)
      throw UserError("task " + task_ + " (class `" + cls_ + "`, " + where_.file + "): its " +
                          method + " raised " + error,
                      where_, "a Task class that runs without raising");
    return out;
  }

 private:
  const PythonPluginApi* api_;
  void* handle_;
  std::string task_, cls_;
  SourceLocation where_;
};

}  // namespace

std::shared_ptr<PythonClassTask> python_class_task(const PythonClassSpec& cs) {
  const Json& ref = cs.class_ref;
  const std::string cls = function_ref_name(ref);
  SourceLocation where = where_of(ref);
  where.field = "class";
  const std::string& yaml = cs.yaml;
  Runtime& rt = runtime(ref);
  if (!rt.api)
    throw UserError("task " + cs.task + " is a Python class (`class: !function " + cls + "` in " +
                        yaml + "), which needs Python: " + rt.failure,
                    where, "an environment where the reference's lm_eval package imports");
  Json spec = {{"yaml", yaml},
               {"task", cs.task},
               {"overrides", cs.overrides},
               {"metadata", cs.metadata},
               {"data_dir", cs.data_dir}};
  std::string error;
  global_random_to_python();  // the class's module and constructor run now
  void* handle;
  {
    GuardedCall guard(where.to_string() + ": task " + cs.task + " (class `" + cls + "`, " + yaml +
                          ") while it is built",
                      python_call_timeout_s());
    handle = rt.api->class_task(&spec, &error);
  }
  throw_if_stopped();
  if (!handle) {
    const std::string flag = kPythonDataUnavailable;
    if (error.rfind(flag, 0) == 0)
      throw RuntimeError(where.to_string() + ": task " + cs.task + " (class `" + cls +
                         "`) could not reach its data from here: " + error.substr(flag.size()));
    throw UserError(
        "task " + cs.task + " (class `" + cls + "`, " + yaml + ") could not be built: " + error,
        where,
        "a Task class beside the YAML that the active environment can import and "
        "build (the reference's lm_eval installed there)");
  }
  return std::make_shared<EmbeddedClassTask>(rt.api, handle, cs.task, cls, where);
}

const TaskFunction& python_task_function(const Json& ref) {
  static std::mutex mu;
  static std::map<std::string, TaskFunction> loaded;
  const std::string module = ref.value("python_module", "");
  const std::string name = function_ref_name(ref);
  const std::string key = module + "\n" + name + "\n" + ref.value("file", "") + ":" +
                          std::to_string(ref.value("line", 0));
  // Hooks resolve their function at every document: a function already loaded is returned before
  // anything touches the file system (the module file is read once per process, as the
  // reference's import is).
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  }
  // No module file beside the YAML: the reference imports the module by name from sys.path.
  std::error_code ec;
  const std::string source = fs::exists(module, ec)
                                 ? module
                                 : "there is no " + fs::path(module).filename().string() +
                                       " next to the YAML (" + module + "), so `" +
                                       name.substr(0, name.rfind('.')) +
                                       "` is imported from the environment's sys.path";
  Runtime& rt = runtime(ref);
  if (!rt.api)
    throw UserError("`!function " + name + "` needs Python (" + source + "): " + rt.failure,
                    where_of(ref), "Python task code that the embedded interpreter can run");
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  std::string display, repr, py_name, error;
  global_random_to_python();  // the module's own code runs when it is first imported
  void* fn;
  {
    // The module's own code runs now: it may loop, crash or take the stop handlers.
    GuardedCall guard(helper_what(where_of(ref), name, module) + " while importing",
                      python_call_timeout_s());
    fn = rt.api->function(module.c_str(), name.c_str(), &display, &repr, &py_name, &error);
  }
  throw_if_stopped();
  if (!fn)
    throw UserError("`!function " + name + "` could not be imported (" + source + "): " + error,
                    where_of(ref), "a module next to the YAML that defines the function");
  TaskFunction f = make_function(rt.api, fn, ref, std::move(display), std::move(py_name));
  f.repr = std::move(repr);
  const TaskFunction& stored = loaded.emplace(key, std::move(f)).first->second;
  {
    std::lock_guard<std::mutex> hl(g_handles_mu);
    handles()[&stored] = fn;
  }
  return stored;
}

}  // namespace lmeval

// The `!function` registry.
#include "lmeval/tasks/function_registry.hpp"

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/python_functions.hpp"

#include <filesystem>
#include <map>
#include <mutex>

namespace lmeval {

FunctionRegistry& FunctionRegistry::instance() {
  static FunctionRegistry r;
  return r;
}

void FunctionRegistry::add(const std::string& family, const std::string& name, TaskFunction fn) {
  if (fn.display.empty()) fn.display = name;
  fns_[family + ":" + name] = std::move(fn);
}

const TaskFunction* FunctionRegistry::find(const std::string& family,
                                           const std::string& name) const {
  auto it = fns_.find(family + ":" + name);
  if (it != fns_.end()) return &it->second;
  it = fns_.find(":" + name);
  return it == fns_.end() ? nullptr : &it->second;
}

std::vector<std::string> FunctionRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fns_) out.push_back(k);
  return out;
}

void throw_needs_python(const Json& ref) {
  namespace fs = std::filesystem;
  std::string name = function_ref_name(ref);
  std::string module = ref.value("python_module", "");
  std::string file = fs::path(module).filename().string();
  std::error_code ec;
  throw UserError(
      "`!function " + name + "` needs Python: " +
          (fs::exists(module, ec)
               ? "lm-eval has no C++ port of this exact " + file + " (" + module +
                     "), and running Python task code is not supported yet"
               : "there is no " + file + " next to the YAML (" + module + "), and importing `" +
                     name.substr(0, name.rfind('.')) +
                     "` from a Python environment is not supported yet"),
      {ref.value("file", ""), ref.value("line", 0), 0, "!function"},
      "a task whose functions lm-eval ports (the reference's own module files) or no !function");
}

const TaskFunction& resolve_function_ref(const Json& ref) {
  register_builtin_task_functions();
  // No C++ port of this exact module source: the embedded interpreter runs the reference's code.
  if (ref.contains("python_module")) return python_task_function(ref);
  std::string name = function_ref_name(ref);
  std::string family = ref.value("dir", "");
  const auto* fn = FunctionRegistry::instance().find(family, name);
  if (!fn) {
    // A filter class or `custom` filter function of a utils.py whose port is a filter
    // (FilterRegistry builds it from the filter_list entry): known, nothing to call here.
    register_builtin_filters();
    const auto& filters = FilterRegistry::instance();
    if ((!family.empty() && filters.contains(family + "/" + name)) || filters.contains(name) ||
        filters.find_function(name, family)) {
      static std::mutex mu;
      static std::map<std::string, TaskFunction> filter_refs;
      std::lock_guard<std::mutex> lock(mu);
      TaskFunction& f = filter_refs[family + ":" + name];
      f.display = name;
      return f;
    }
  }
  if (!fn && ref.contains("port_module")) {
    // The module's source is one a family ports, but not this function of it: the reference's
    // Python runs it, as for a module without any port.
    Json py = ref;
    py["python_module"] = ref["port_module"];
    py["dir"] = "";
    return python_task_function(py);
  }
  if (!fn) {
    std::vector<std::string> known;
    for (const auto& k : FunctionRegistry::instance().names())
      if (k.rfind(family + ":", 0) == 0 || k[0] == ':') known.push_back(k.substr(k.find(':') + 1));
    std::string hint = did_you_mean(name, known);
    throw UserError("unknown function '!function " + name +
                        "' (no C++ implementation registered for "
                        "folder '" +
                        family + "')" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                    {ref.value("file", ""), ref.value("line", 0), 0, "!function"},
                    "a function built into lm-eval (see `lm-eval ls functions`)");
  }
  return *fn;
}

}  // namespace lmeval

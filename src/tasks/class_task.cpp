// Choosing a class task's object: native port or the reference's class in Python.
#include "lmeval/tasks/class_task.hpp"

#include <string_view>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/python_functions.hpp"
#include "tasks/class_tasks/native_class_tasks.hpp"

namespace lmeval {

namespace {

// A native port: the port family its module file's sha256 binds to (function_sources_table.cpp)
// and the class name as the YAML writes it.
struct NativeClassTask {
  std::string_view family, cls;
  std::shared_ptr<PythonClassTask> (*make)(const TaskConfig&, DataSource&);
};

constexpr NativeClassTask kNative[] = {
    {"squadv2", "task.SQuAD2", class_tasks::make_squadv2},
};

}  // namespace

std::shared_ptr<PythonClassTask> make_class_task(const TaskConfig& cfg, DataSource& data,
                                                 const std::string& data_dir) {
  const Json& ref = cfg.python_class;
  // bind_function_sources left "python_module" when no port has this exact module source (a
  // user's edited copy): the reference's class runs.
  if (ref.contains("python_module") || ref.value("dir", "").empty())
    return python_class_task(python_class_spec(cfg, data_dir));
  const std::string family = ref.value("dir", ""), cls = function_ref_name(ref);
  for (const auto& n : kNative)
    if (n.family == family && n.cls == cls) return n.make(cfg, data);
  throw UserError("task " + cfg.name() + ": `class: !function " + cls +
                      "` names a class lm-eval has no port of in its module (port family " +
                      family + ")",
                  {ref.value("file", ""), ref.value("line", 0), 0, "class"},
                  "a class of the module that lm-eval ports, or an edited module (run in Python)");
}

}  // namespace lmeval

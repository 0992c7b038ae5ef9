// A loaded task: its config, documents and the doc_to_* interpretation rules (spec §3.4, §4).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/data/data_source.hpp"
#include "lmeval/tasks/task_config.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval {

class PyRandom;
struct TaskFunction;

// A Python-class task's object (class_task.hpp makes it): the reference's own Task subclass in the
// embedded interpreter (python_functions.hpp), or a native port of it (tasks/class_tasks/), which
// loads its documents and builds, filters and scores its requests itself. `call` runs one of its
// methods (configure, build, score: python_plugin_api.hpp, class_task_call, with the same JSON).
class PythonClassTask {
 public:
  // Renders a chat history (a JSON list of {role, content}) with the run's chat template: the
  // evaluator gives the model's rendering, so tasks never see models.
  using Chat = std::function<std::string(const Json& messages, bool add_generation_prompt)>;
  virtual ~PythonClassTask() = default;
  Json call(const std::string& method, const Json& kwargs) { return call(method, kwargs, nullptr); }
  // `chat` (build only; null without a chat template): the class's `chat_template` callable.
  virtual Json call(const std::string& method, const Json& kwargs, const Chat* chat) = 0;
};

class Task {
 public:
  // Loads the documents the task needs from `data`. Throws UserError naming the task, the
  // dataset and the split when the evaluation split is missing or a row is malformed.
  static std::unique_ptr<Task> load(TaskConfig cfg, DataSource& data);

  const TaskConfig& config() const { return cfg_; }
  // A Python-class task (config().python_class): its object, which holds its documents (this
  // Task then has none); null for every other task.
  PythonClassTask* python_class() const { return python_class_.get(); }
  void set_python_class(std::shared_ptr<PythonClassTask> c) { python_class_ = std::move(c); }
  const std::string& name() const { return name_; }
  const std::vector<Doc>& eval_docs() const { return *eval_docs_; }
  // The documents as they are now; they stay valid across reaccess_eval_docs().
  std::shared_ptr<const std::vector<Doc>> eval_docs_snapshot() const { return eval_docs_; }
  // One access to the reference's `task.eval_docs` property, which re-runs process_docs on the
  // evaluation split each time. Only a process_docs that draws from the global random gives
  // different documents (and advances that random); for any other task this does nothing.
  void reaccess_eval_docs();
  // The few-shot pool; `fewshot_available` is false when the split it names is absent.
  const std::vector<Doc>& fewshot_docs() const { return fewshot_docs_; }
  bool fewshot_available() const { return fewshot_available_; }
  std::string fewshot_source() const { return fewshot_source_; }
  const FewshotConfig& fewshot_config() const { return fewshot_cfg_; }

  // Interpretation of the fields for a document; `spec` overrides the task's (few-shot config).
  Json doc_to_text(const Doc& doc, const Json* spec = nullptr) const;
  Json doc_to_target(const Doc& doc, const Json* spec = nullptr) const;
  // nullopt when the task has no doc_to_choice (or spec is null).
  std::optional<std::vector<std::string>> doc_to_choice(const Doc& doc,
                                                        const Json* spec = nullptr) const;
  // description / gen_prefix: empty -> nullopt; a feature -> doc[name]; else the rendered template.
  std::optional<std::string> resolve_field(const Doc& doc, const Json& spec,
                                           const std::string& field) const;

  bool multiple_input() const { return multiple_input_; }
  size_t multiple_target() const { return multiple_target_; }
  bool has_choices() const { return cfg_.has(TaskField::doc_to_choice); }

  // Final number of shots after the --num_fewshot rules (spec §5.7).
  int num_fewshot() const { return num_fewshot_; }
  void set_num_fewshot(int n) { num_fewshot_ = n; }
  // The task version as in results `versions` (raw YAML value, or "Yaml").
  Json version() const;

  // Renders a template string with the doc as variables (compiled templates cached).
  std::string render(const std::string& tmpl, const Doc& doc, const std::string& field) const;

 private:
  std::vector<Doc> load_split(DataSource& data, const std::string& split, const Json& process_docs,
                              bool required, bool* found, bool keep_raw = false);
  // The split's rows through the task's process_docs (kept raw when it draws global random).
  std::vector<Doc> finish_split(std::vector<Doc> rows, const std::string& split,
                                const Json& process_docs, bool keep_raw);
  void load_custom_dataset();
  std::vector<Doc> run_process_docs(const TaskFunction& fn, std::vector<Doc> rows,
                                    const std::string& split) const;
  Json apply_spec(const Doc& doc, const Json& spec, TaskField field, bool target) const;
  // doc_to_choice's list as the field gives it (choices not yet turned into strings).
  Json choice_list(const Doc& doc, const Json& spec) const;
  // ConfigurableTask.__init__'s "Test One Doc" checks that raise on document 0.
  void check_first_document(const Json& target) const;

  TaskConfig cfg_;
  std::string name_;
  std::shared_ptr<PythonClassTask> python_class_;
  FewshotConfig fewshot_cfg_;
  std::shared_ptr<const std::vector<Doc>> eval_docs_ = std::make_shared<const std::vector<Doc>>();
  // The evaluation split before process_docs, kept only when process_docs draws global random.
  std::vector<Doc> raw_eval_rows_;
  // custom_dataset: the splits its function returned (then no dataset is read).
  std::optional<std::map<std::string, std::vector<Doc>>> custom_splits_;
  const TaskFunction* impure_process_docs_ = nullptr;
  std::vector<Doc> fewshot_docs_;
  bool fewshot_available_ = true;
  std::string fewshot_source_;
  std::vector<std::string> features_;
  bool multiple_input_ = false;
  size_t multiple_target_ = 0;
  int num_fewshot_ = 0;
  mutable std::map<std::string, tmpl::Template> templates_;
};

}  // namespace lmeval

// Validation of a run configuration without a model.
#include "lmeval/evaluator/validator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/evaluator/scoring.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/models/reference_model_names.hpp"
#include "lmeval/output/output_writer.hpp"
#include "lmeval/prompt/prompt_builder.hpp"
#include "lmeval/tasks/class_task.hpp"
#include "lmeval/tasks/python_functions.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_selection.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

bool looks_like_template(const std::string& s) {
  return s.find("{{") != std::string::npos || s.find("{%") != std::string::npos ||
         s.find("{#") != std::string::npos;
}

void check_templates(const TaskConfig& tc, std::vector<UserError>& problems) {
  for (TaskField field :
       {TaskField::doc_to_text, TaskField::doc_to_target, TaskField::doc_to_choice,
        TaskField::description, TaskField::gen_prefix, TaskField::doc_to_decontamination_query}) {
    const Json& v = tc.get(field);
    if (!v.is_string() || !looks_like_template(v.get<std::string>())) continue;
    try {
      tmpl::Template::parse(v.get<std::string>(), tmpl::task_options(),
                            "task " + tc.name() + ", field " + field_name(field));
    } catch (UserError& e) {
      SourceLocation w = tc.where(field);
      problems.emplace_back(e.message(), w, e.expected());
    }
  }
}

}  // namespace

void require_documents(const Task& task) {
  if (!task.eval_docs().empty()) return;
  const TaskConfig& tc = task.config();
  TaskField field =
      tc.str(TaskField::test_split).empty() ? TaskField::validation_split : TaskField::test_split;
  std::string split = tc.str(field);
  DatasetRef ref = dataset_ref(tc);
  std::string files;
  if (ref.kwargs.is_object() && ref.kwargs.contains("data_files")) {
    const Json& df = ref.kwargs["data_files"];
    const Json& mine = df.is_object() && df.contains(split) ? df[split] : df;
    if (mine.is_string())
      files = mine.get<std::string>();
    else if (mine.is_array())
      for (const auto& f : mine)
        if (f.is_string()) files += (files.empty() ? "" : ", ") + f.get<std::string>();
  }
  bool processed = tc.has(TaskField::process_docs);
  throw UserError("task " + task.name() + " has no documents to evaluate: split '" + split +
                      "' of dataset " + ref.path +
                      (files.empty() ? "" : " (data file " + files + ")") + " is empty" +
                      (processed ? " after process_docs" : ""),
                  tc.where(field), "at least one row in the evaluation split");
}

// Data that is not on this machine (DataUnavailable: "locally"; a RuntimeError of an offline
// machine: "here") is a fact about the machine, not a problem of the configuration: a note.
static void note_data_absent(ValidationReport& report, const TaskConfig& tc, const char* where,
                             const std::string& why) {
  report.notes.push_back("task " + tc.name() + ": data not available " + where +
                         ", rendering skipped (" + why + ")");
}

// A Python-class task: its class built in the embedded interpreter (which loads its data) and
// document 0's requests built by it; data that cannot be reached from here is a note.
void validate_class_task(const EvalConfig& cfg, const TaskConfig& tc, DataSource& data,
                         ValidationReport& report) {
  std::string data_dir;
  if (cfg.data_dir)
    data_dir = *cfg.data_dir;
  else if (const char* env = std::getenv("LMEVAL_DATA_DIR"); env && *env)
    data_dir = env;
  try {
    std::shared_ptr<PythonClassTask> task = make_class_task(tc, data, data_dir);
    task->call("configure", {{"num_fewshot", cfg.num_fewshot ? Json(*cfg.num_fewshot) : Json()},
                             {"gen_kwargs", Json()},
                             {"predict_only", cfg.predict_only},
                             {"fewshot_seed", cfg.seed[3] ? Json(*cfg.seed[3]) : Json()}});
    task->call("build", {{"limit", 1},
                         {"samples", Json()},
                         {"system_instruction",
                          cfg.system_instruction ? Json(*cfg.system_instruction) : Json()},
                         {"fewshot_seed", Json()}});
    ++report.docs_rendered;
  } catch (const DataUnavailable& e) {
    note_data_absent(report, tc, "locally", e.message());
  } catch (UserError& e) {
    report.problems.push_back(e);
  } catch (const RuntimeError& e) {
    note_data_absent(report, tc, "here", e.what());
  }
}

void validate_run(const EvalConfig& cfg, ValidationReport& report) {
  register_builtins();
  auto& problems = report.problems;
  {
    // The run's own checks of the settings (ranges, the flags that need one another).
    EvalConfig finalized = cfg;
    finalized.finalize(&problems);
  }
  // Model and its arguments.
  const ModelInfoEntry* model = ModelRegistry::instance().find(cfg.model);
  if (!model) {
    std::string expected;
    std::string problem = model_name_problem(cfg.model, &expected);
    problems.emplace_back(problem, SourceLocation{"", 0, 0, "model"}, expected);
  } else if (cfg.model_args.is_object() && !model->passes_other_args) {
    for (auto it = cfg.model_args.begin(); it != cfg.model_args.end(); ++it) {
      const auto& known = model->known_args;
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string hint = did_you_mean(it.key(), known), list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        problems.emplace_back("unknown model_args key '" + it.key() + "' for model " + cfg.model +
                                  (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                              SourceLocation{"", 0, 0, "model_args." + it.key()},
                              "one of: " + list);
      }
    }
  }
  // Output path writable (a probe file in its folder, as run checks before the model phase).
  if (cfg.output_path) {
    try {
      check_output_path_writable(*cfg.output_path);
    } catch (const UserError& e) {
      problems.push_back(e);
    }
  }
  // Task files that could not even be indexed.
  TaskIndex index = task_index_for(cfg, cfg.tasks);
  for (const auto& [path, msg] : index.skipped()) problems.emplace_back(msg, SourceLocation{}, "");
  // A `tasks` value the config file gave in a form that could not be read is reported already:
  // the run's task list is unknown then, not empty ("No tasks specified" would be a second,
  // wrong problem).
  const bool tasks_unreadable =
      cfg.tasks.empty() && std::any_of(problems.begin(), problems.end(), [](const UserError& e) {
        return e.where().field == "tasks";
      });
  TaskSelection sel =
      tasks_unreadable ? TaskSelection{} : select_tasks(index, cfg.tasks, cfg.metadata, &problems);
  auto data = make_data_source(cfg);
  for (const auto& tc : sel.tasks) {
    ++report.tasks_checked;
    if (!tc.python_class.is_null()) {
      validate_class_task(cfg, tc, *data, report);
      continue;
    }
    size_t before = problems.size();
    check_templates(tc, problems);
    try {
      metric_specs(tc, cfg.predict_only);
    } catch (UserError& e) {
      problems.push_back(e);
    }
    const Json& fl = tc.get(TaskField::filter_list);
    if (fl.is_array()) {
      size_t i = 0;
      for (const auto& entry : fl) {
        SourceLocation where = tc.where(TaskField::filter_list);
        where.field = "filter_list[" + std::to_string(i++) + "]";
        try {
          FilterEnsemble::from_config(entry, where);
        } catch (UserError& e) {
          problems.push_back(e);
        }
      }
    }
    if (problems.size() != before) continue;
    // Render document 0 where the data is available locally.
    std::unique_ptr<Task> task;
    try {
      task = Task::load(tc, *data);
    } catch (const DataUnavailable& e) {
      note_data_absent(report, tc, "locally", e.message());
      continue;
    } catch (UserError& e) {
      problems.push_back(e);
      continue;
    } catch (const RuntimeError& e) {
      note_data_absent(report, tc, "here", e.what());
      continue;
    }
    try {
      require_documents(*task);
      int nf = cfg.num_fewshot.value_or(tc.num_fewshot().value_or(0));
      if (tc.num_fewshot() == 0) nf = 0;
      if (!task->fewshot_available()) {
        if (nf > 0)
          report.notes.push_back("task " + tc.name() +
                                 ": few-shot source absent locally; rendered at 0 shots");
        nf = 0;
      }
      task->set_num_fewshot(nf);
      FewshotSampler sampler(*task, cfg.seed[3].value_or(1234));
      PromptOptions opts;
      opts.system_instruction = cfg.system_instruction;
      build_requests(*task, 0, {0}, {0}, sampler, opts, false);
      ++report.docs_rendered;
    } catch (UserError& e) {
      problems.push_back(e);
    }
  }
}

}  // namespace lmeval

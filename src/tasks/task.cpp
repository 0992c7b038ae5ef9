// Task loading and the doc_to_* rules of ConfigurableTask.
#include "lmeval/tasks/task.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task_context.hpp"

namespace lmeval {

std::vector<Doc> Task::load_split(DataSource& data, const std::string& split,
                                  const Json& process_docs, bool required, bool* found,
                                  bool keep_raw) {
  DatasetRef ref = dataset_ref(cfg_);
  std::optional<std::vector<Doc>> rows;
  if (custom_splits_) {
    // custom_dataset: the splits its function returned, no dataset to read.
    if (auto it = custom_splits_->find(split); it != custom_splits_->end()) rows = it->second;
    if (found) *found = rows.has_value();
    if (!rows) {
      if (!required) return {};
      std::string have;
      for (const auto& [k, v] : *custom_splits_) have += (have.empty() ? "" : ", ") + k;
      throw UserError("task " + name_ + ": custom_dataset returned no split '" + split +
                          "' (it returned: " + (have.empty() ? "none" : have) + ")",
                      cfg_.where(TaskField::custom_dataset), "a split named by the task");
    }
    return finish_split(std::move(*rows), split, process_docs, keep_raw);
  }
  // Name the role the split plays in this run: the reference loads the few-shot pool (the
  // training split, else validation, else test) whenever a task is built, even at 0 shots.
  std::string eval_split = cfg_.str(TaskField::test_split);
  if (eval_split.empty()) eval_split = cfg_.str(TaskField::validation_split);
  const std::string role =
      required || split == eval_split
          ? " (the documents it evaluates)"
          : " (its few-shot pool, read whenever the task is loaded, also at 0 shots)";
  const std::string what = "task " + name_ + " needs split '" + split + "' of dataset " + ref.path +
                           (ref.name ? " (config " + *ref.name + ")" : "") + role;
  try {
    rows = data.load_split(ref, split);
  } catch (const DataUnavailable& e) {
    throw DataUnavailable(what + ": " + e.message(), e.where(), e.expected());
  } catch (const UserError& e) {
    throw UserError(what + ": " + e.message(), e.where(), e.expected());
  } catch (const RuntimeError& e) {
    // Data absent here and the Hub unreachable (offline machine): say which task needs what.
    throw RuntimeError(cfg_.where(TaskField::dataset_path).to_string() + ": " + what +
                       ", which is not in " + data.describe() + ": " + e.what() +
                       ". Put it under --data_dir as <org>/<name>/<config>/<split>.jsonl.");
  }
  if (found) *found = rows.has_value();
  if (!rows) {
    if (!required) return {};
    throw DataUnavailable(
        "split '" + split + "' of dataset " + ref.path +
            (ref.name ? " (config " + *ref.name + ")" : "") + " not found in " + data.describe(),
        cfg_.where(split == cfg_.str(TaskField::test_split) ? TaskField::test_split
                                                            : TaskField::validation_split),
        "the dataset under --data_dir/$LMEVAL_DATA_DIR as <org>/<name>/<config>/<split>.jsonl, "
        "or a reachable Hub dataset");
  }
  return finish_split(std::move(*rows), split, process_docs, keep_raw);
}

std::vector<Doc> Task::finish_split(std::vector<Doc> rows, const std::string& split,
                                    const Json& process_docs, bool keep_raw) {
  if (!is_function_ref(process_docs)) return rows;
  const auto& fn = resolve_function_ref(process_docs);
  if (!fn.process_docs)
    throw UserError("function is not a process_docs function", cfg_.where(TaskField::process_docs),
                    "a process_docs(dataset) function");
  // Python code may draw: its rows are kept until its first call says whether it did.
  const bool may_draw = fn.draws_global_random || fn.last_call_drew_global_random;
  if (keep_raw && may_draw) raw_eval_rows_ = rows;
  std::vector<Doc> docs = run_process_docs(fn, std::move(rows), split);
  if (keep_raw && may_draw) {
    if (fn.draws_global_random || fn.last_call_drew_global_random())
      impure_process_docs_ = &fn;
    else
      raw_eval_rows_ = {};
  }
  return docs;
}

std::vector<Doc> Task::run_process_docs(const TaskFunction& fn, std::vector<Doc> rows,
                                        const std::string& split) const {
  try {
    return fn.process_docs(std::move(rows));
  } catch (UserError& e) {
    throw UserError("task " + name_ + ", process_docs on split '" + split + "': " + e.message(),
                    e.where(), e.expected());
  }
}

void Task::reaccess_eval_docs() {
  if (!impure_process_docs_) return;
  std::string split = cfg_.str(TaskField::test_split);
  if (split.empty()) split = cfg_.str(TaskField::validation_split);
  eval_docs_ = std::make_shared<std::vector<Doc>>(
      run_process_docs(*impure_process_docs_, raw_eval_rows_, split));
}

// ConfigurableTask.download with a custom_dataset: the function called once with the task's
// metadata and dataset_kwargs as keyword arguments (trust_remote_code popped from the latter, as
// the reference does under datasets >= 4); its splits stand in for the dataset.
void Task::load_custom_dataset() {
  const Json& ref = cfg_.get(TaskField::custom_dataset);
  if (!is_function_ref(ref))
    throw UserError("custom_dataset must be a `!function module.fn`",
                    cfg_.where(TaskField::custom_dataset), "custom_dataset: !function module.fn");
  const TaskFunction& fn = resolve_function_ref(ref);
  if (!fn.custom_dataset)
    throw UserError("custom_dataset names a function lm-eval cannot call as a dataset loader",
                    cfg_.where(TaskField::custom_dataset),
                    "a Python function returning a DatasetDict");
  Json kwargs = cfg_.get(TaskField::dataset_kwargs);
  if (kwargs.is_object() && kwargs.contains("trust_remote_code")) {
    // The reference pops it from the config's own dict, so its results' configs lose it too.
    kwargs.erase("trust_remote_code");
    cfg_.set(TaskField::dataset_kwargs, kwargs);
  }
  if (!kwargs.is_object()) kwargs = Json::object();
  Json metadata = cfg_.get(TaskField::metadata);
  if (!metadata.is_object()) metadata = Json::object();
  try {
    custom_splits_ = fn.custom_dataset(metadata, kwargs);
  } catch (UserError& e) {
    throw UserError("task " + name_ + ", custom_dataset: " + e.message(), e.where(), e.expected());
  }
}

std::unique_ptr<Task> Task::load(TaskConfig cfg, DataSource& data) {
  auto t = std::unique_ptr<Task>(new Task());
  t->cfg_ = std::move(cfg);
  t->name_ = t->cfg_.name();
  // A Python-class task's class loads its own documents when the evaluator builds it.
  if (!t->cfg_.python_class.is_null()) return t;
  t->fewshot_cfg_ = resolved_fewshot_config(t->cfg_);
  const Json& pd = t->cfg_.get(TaskField::process_docs);
  std::string test = t->cfg_.str(TaskField::test_split),
              val = t->cfg_.str(TaskField::validation_split),
              train = t->cfg_.str(TaskField::training_split);
  if (t->cfg_.has(TaskField::custom_dataset))
    t->load_custom_dataset();
  else if (!t->cfg_.has(TaskField::dataset_path))
    throw UserError("task " + t->name_ + " has no dataset_path", t->cfg_.where(TaskField::task),
                    "dataset_path: <hub id, json/csv with data_files, or a local path>");
  // Few-shot pool first, as ConfigurableTask.__init__ does (order matters when process_docs
  // consumes the global random state).
  const Json& fs_split = t->fewshot_cfg_.split;
  const Json& fs_pd = t->fewshot_cfg_.process_docs;
  if (fs_split.is_string()) {
    bool found = false;
    t->fewshot_docs_ = t->load_split(data, fs_split.get<std::string>(), fs_pd, false, &found);
    t->fewshot_available_ = found;
    t->fewshot_source_ = "split '" + fs_split.get<std::string>() + "'";
  } else if (!t->fewshot_cfg_.samples.is_null()) {
    const Json& s = t->fewshot_cfg_.samples;
    if (is_function_ref(s)) {
      const auto& fn = resolve_function_ref(s);
      if (!fn.doc_fn)
        throw UserError("fewshot_config.samples function must return docs",
                        t->cfg_.where(TaskField::fewshot_config),
                        "a function returning a list of docs");
      // ConfigurableTask.fewshot_docs calls it with no argument (a null document).
      Json docs = fn.doc_fn(Json());
      if (!docs.is_array() ||
          !std::all_of(docs.begin(), docs.end(), [](const Json& d) { return d.is_object(); }))
        throw UserError("fewshot_config.samples function `" + function_ref_name(s) + "` returned " +
                            docs.dump().substr(0, 80) + ", not a list of documents",
                        t->cfg_.where(TaskField::fewshot_config),
                        "a function returning a list of documents (dicts)");
      for (auto& d : docs) t->fewshot_docs_.push_back(d);
    } else if (s.is_array()) {
      for (const auto& d : s) t->fewshot_docs_.push_back(d);
    } else {
      throw UserError("fewshot_config.samples must be a list of documents",
                      t->cfg_.where(TaskField::fewshot_config), "a list of mappings");
    }
    t->fewshot_source_ = "fewshot_config.samples";
  } else {
    std::string split = !train.empty() ? train : (!val.empty() ? val : test);
    if (!split.empty()) {
      bool found = false;
      t->fewshot_docs_ = t->load_split(data, split, pd, false, &found);
      t->fewshot_available_ = found;
      t->fewshot_source_ = "split '" + split + "'";
    } else {
      t->fewshot_available_ = false;
    }
  }
  std::string eval_split = !test.empty() ? test : val;
  if (eval_split.empty())
    throw UserError("Task dataset (path=" + t->cfg_.str(TaskField::dataset_path) +
                        ", name=" + t->cfg_.str(TaskField::dataset_name, "None") +
                        ") must have valid or test docs!",
                    t->cfg_.where(TaskField::task), "test_split or validation_split");
  t->eval_docs_ = std::make_shared<std::vector<Doc>>(
      t->load_split(data, eval_split, pd, true, nullptr, /*keep_raw=*/true));
  const std::vector<Doc>& docs = *t->eval_docs_;
  if (!docs.empty() && docs[0].is_object())
    for (auto it = docs[0].begin(); it != docs[0].end(); ++it) t->features_.push_back(it.key());
  // Multiple input / multiple target are decided on document 0 (spec §3.4).
  if (!docs.empty()) {
    const Doc& d0 = docs[0];
    // ConfigurableTask.__init__ renders document 0's text whatever the output type, so a draw
    // from the global `random` there happens in every task; a hook failing there fails there.
    Json text, target;
    try {
      text = t->doc_to_text(d0);
      target = t->doc_to_target(d0);
    } catch (const UserError& e) {
      throw UserError("task " + t->name_ + ", doc_id 0: " + e.message(), e.where(), e.expected());
    }
    if (t->has_choices()) t->multiple_input_ = text.is_number_integer();
    if (target.is_array()) t->multiple_target_ = target.size();
    t->check_first_document(target);
  }
  t->num_fewshot_ = t->cfg_.num_fewshot().value_or(0);
  return t;
}

Json Task::version() const {
  const Json& m = cfg_.get(TaskField::metadata);
  if (m.is_object() && m.contains("version")) return m["version"];
  return "Yaml";
}

std::string Task::render(const std::string& src, const Doc& doc, const std::string& field) const {
  auto it = templates_.find(src);
  if (it == templates_.end()) {
    tmpl::Options opts = tmpl::task_options();
    // jinja2's `random` filter draws from Python's global `random`: the run's one stream.
    opts.randbelow = [](uint64_t n) { return global_random().randbelow(n); };
    auto t = tmpl::Template::parse(src, opts, "task " + name_ + ", field " + field);
    it = templates_.emplace(src, std::move(t)).first;
  }
  return it->second.render(doc);
}

Json Task::apply_spec(const Doc& doc, const Json& spec, TaskField field_key, bool target) const {
  const std::string& field = field_name(field_key);
  if (spec.is_number_integer()) return spec;
  if (spec.is_string()) {
    const std::string& s = spec.get_ref<const std::string&>();
    if (std::find(features_.begin(), features_.end(), s) != features_.end()) {
      if (!doc.contains(s))
        throw UserError("document has no field '" + s + "'", cfg_.where(field_key),
                        "every document to have the field named by " + field);
      return doc[s];
    }
    std::string out = render(s, doc, field);
    if (unicode::py_isdigit(out) && has_choices()) {
      try {
        return tmpl::literal_eval(out);
      } catch (...) {
        return out;
      }
    }
    if (target && out.size() >= 2 && out.front() == '[' && out.back() == ']') {
      try {
        return tmpl::literal_eval(out);
      } catch (...) {
        return out;
      }
    }
    return out;
  }
  if (target && spec.is_array()) return spec;
  if (is_function_ref(spec)) {
    const auto& fn = resolve_function_ref(spec);
    if (!fn.doc_fn)
      throw UserError("function cannot be used as " + field, cfg_.where(field_key),
                      "a doc function");
    return fn.doc_fn(doc);
  }
  throw UserError("unsupported " + field + " of type " + spec.type_name(), cfg_.where(field_key),
                  "a field name, template, integer or !function");
}

Json Task::doc_to_text(const Doc& doc, const Json* spec) const {
  const Json& s = spec ? *spec : cfg_.get(TaskField::doc_to_text);
  if (s.is_null())
    throw UserError("task has no doc_to_text", cfg_.where(TaskField::doc_to_text), "doc_to_text");
  return apply_spec(doc, s, TaskField::doc_to_text, false);
}

Json Task::doc_to_target(const Doc& doc, const Json* spec) const {
  const Json& s = spec ? *spec : cfg_.get(TaskField::doc_to_target);
  if (s.is_null())
    throw UserError("task has no doc_to_target", cfg_.where(TaskField::doc_to_target),
                    "doc_to_target");
  return apply_spec(doc, s, TaskField::doc_to_target, true);
}

std::optional<std::vector<std::string>> Task::doc_to_choice(const Doc& doc,
                                                            const Json* spec) const {
  const Json& s = spec ? *spec : cfg_.get(TaskField::doc_to_choice);
  if (s.is_null()) return std::nullopt;
  Json list = choice_list(doc, s);
  std::vector<std::string> out;
  for (const auto& c : list) out.push_back(c.is_string() ? c.get<std::string>() : py::str(c));
  return out;
}

Json Task::choice_list(const Doc& doc, const Json& s) const {
  Json list;
  if (s.is_string()) {
    const std::string& str = s.get_ref<const std::string&>();
    if (std::find(features_.begin(), features_.end(), str) != features_.end()) {
      list = doc.contains(str) ? doc[str] : Json();
    } else {
      std::string rendered = render(str, doc, "doc_to_choice");
      try {
        list = tmpl::literal_eval(rendered);
      } catch (const UserError&) {
        throw UserError("doc_to_choice rendered to '" + rendered.substr(0, 200) +
                            "', which is not a Python list literal",
                        cfg_.where(TaskField::doc_to_choice),
                        "a template rendering a list, e.g. {{choices.text}}");
      }
    }
  } else if (s.is_array()) {
    list = s;
  } else if (is_function_ref(s)) {  // before the dict case: a function ref is an object too
    const auto& fn = resolve_function_ref(s);
    if (!fn.doc_fn)
      throw UserError("function cannot be used as doc_to_choice",
                      cfg_.where(TaskField::doc_to_choice), "a doc function");
    list = fn.doc_fn(doc);
  } else if (s.is_object()) {
    list = Json::array();
    for (auto it = s.begin(); it != s.end(); ++it) list.push_back(it.value());
  }
  if (!list.is_array())
    throw UserError("doc_to_choice did not give a list", cfg_.where(TaskField::doc_to_choice),
                    "a list of strings");
  return list;
}

void Task::check_first_document(const Json& target) const {
  if (!has_choices()) return;
  const Doc& d0 = (*eval_docs_)[0];
  Json choices = choice_list(d0, cfg_.get(TaskField::doc_to_choice));
  const auto n = static_cast<int64_t>(choices.size());
  auto fail = [&](const std::string& what, TaskField field, const std::string& expected) {
    throw UserError("task " + name_ + ", doc_id 0: " + what, cfg_.where(field), expected);
  };
  // test_choice[test_target]: an IndexError past either end.
  if (target.is_number_integer()) {
    int64_t t = target.get<int64_t>();
    if (t >= n || t < -n)
      fail("doc_to_target gave index " + std::to_string(t) + " but doc_to_choice gave " +
               std::to_string(n) + " choice" + (n == 1 ? "" : "s") +
               " (the reference raises IndexError building the task)",
           TaskField::doc_to_target,
           n == 0 ? "doc_to_choice to give at least one choice"
                  : "an index from " + std::to_string(-n) + " to " + std::to_string(n - 1));
  }
  // The whitespace check reads each choice's first character: choice[0].
  for (int64_t i = 0; i < n; ++i) {
    const Json& c = choices[static_cast<size_t>(i)];
    if (c.is_string() && !c.get_ref<const std::string&>().empty()) continue;
    if (c.is_array() && !c.empty()) continue;
    if (c.is_object()) continue;  // a KeyError or not, by its keys: left to the run
    fail("choice " + std::to_string(i) + " of doc_to_choice is " +
             (c.is_string() ? std::string("an empty string") : py::repr(c)) +
             " (the reference raises " +
             (c.is_string() || c.is_array() ? "IndexError" : "TypeError") +
             " reading its first character while building the task)",
         TaskField::doc_to_choice, "non-empty strings as the choices of the first document");
  }
}

std::optional<std::string> Task::resolve_field(const Doc& doc, const Json& spec,
                                               const std::string& field) const {
  if (spec.is_null()) return std::nullopt;
  if (is_function_ref(spec)) {
    Json v = resolve_function_ref(spec).doc_fn(doc);
    return v.is_string() ? v.get<std::string>() : py::str(v);
  }
  if (!spec.is_string()) return py::str(spec);
  const std::string& s = spec.get_ref<const std::string&>();
  if (s.empty()) return std::nullopt;
  if (std::find(features_.begin(), features_.end(), s) != features_.end()) {
    const Json& v = doc[s];
    return v.is_string() ? v.get<std::string>() : py::str(v);
  }
  return render(s, doc, field);
}

}  // namespace lmeval

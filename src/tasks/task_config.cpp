// TaskConfig/GroupConfig validation and serialisation.
#include "lmeval/tasks/task_config.hpp"

#include <algorithm>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/tasks/function_registry.hpp"

namespace lmeval {

namespace {

// TaskField's YAML keys, in its order.
const std::vector<std::string>& field_names() {
  static const std::vector<std::string> f = {"task",
                                             "task_alias",
                                             "tag",
                                             "custom_dataset",
                                             "dataset_path",
                                             "dataset_name",
                                             "dataset_kwargs",
                                             "training_split",
                                             "validation_split",
                                             "test_split",
                                             "fewshot_split",
                                             "process_docs",
                                             "doc_to_text",
                                             "doc_to_target",
                                             "doc_to_image",
                                             "doc_to_audio",
                                             "unsafe_code",
                                             "doc_to_choice",
                                             "process_results",
                                             "use_prompt",
                                             "description",
                                             "target_delimiter",
                                             "fewshot_delimiter",
                                             "fewshot_config",
                                             "num_fewshot",
                                             "metric_list",
                                             "output_type",
                                             "generation_kwargs",
                                             "repeats",
                                             "filter_list",
                                             "should_decontaminate",
                                             "doc_to_decontamination_query",
                                             "gen_prefix",
                                             "metadata",
                                             "cluster_key"};
  return f;
}

}  // namespace

const std::string& field_name(TaskField field) {
  return field_names().at(static_cast<size_t>(field));
}

const std::vector<std::string>& task_config_fields() {
  static const std::vector<std::string> f(
      field_names().begin(), field_names().begin() + static_cast<long>(TaskField::cluster_key));
  return f;
}

const std::vector<std::string>& task_yaml_extra_keys() {
  // group/task_list are dropped by the reference's factory; cluster_key is lm-eval's own.
  static const std::vector<std::string> f = {"group", "task_list", "cluster_key"};
  return f;
}

const Json& TaskConfig::get(const std::string& key) const {
  static const Json null_json;
  auto it = raw.find(key);
  return it == raw.end() ? null_json : *it;
}

const Json& TaskConfig::get(TaskField field) const { return get(field_name(field)); }

std::string TaskConfig::str(TaskField field, const std::string& def) const {
  const Json& v = get(field);
  return v.is_string() ? v.get<std::string>() : def;
}

SourceLocation TaskConfig::where(TaskField field) const { return source.where(field_name(field)); }

void TaskConfig::set(TaskField field, Json value) { raw[field_name(field)] = std::move(value); }

std::optional<std::string> TaskConfig::task_alias() const {
  const Json& v = get(TaskField::task_alias);
  return v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
}

std::optional<int> TaskConfig::num_fewshot() const {
  const Json& v = get(TaskField::num_fewshot);
  return v.is_number_integer() ? std::optional<int>(v.get<int>()) : std::nullopt;
}

int TaskConfig::repeats() const {
  const Json& v = get(TaskField::repeats);
  return v.is_number_integer() ? v.get<int>() : 1;
}

bool TaskConfig::unsafe_code() const {
  const Json& v = get(TaskField::unsafe_code);
  return v.is_boolean() && v.get<bool>();
}

std::optional<std::string> TaskConfig::cluster_key() const {
  const Json& v = get(TaskField::cluster_key);
  return v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
}

namespace {

bool is_fn(const Json& v) { return is_function_ref(v); }

void check_type(const std::string& key, const Json& v, const SourceLocation& where) {
  auto bad = [&](const std::string& expected) {
    throw UserError("field '" + key + "' has the wrong type (" + std::string(v.type_name()) + ")",
                    where, expected);
  };
  if (v.is_null()) return;
  if (key == "task" || key == "task_alias" || key == "dataset_path" || key == "training_split" ||
      key == "validation_split" || key == "test_split" || key == "fewshot_split" ||
      key == "use_prompt" || key == "output_type") {
    if (!v.is_string()) bad("a string");
  } else if (key == "dataset_name") {
    if (!v.is_string() && !v.is_number()) bad("a string");
  } else if (key == "description" || key == "target_delimiter" || key == "fewshot_delimiter" ||
             key == "gen_prefix") {
    if (!v.is_string() && !is_fn(v)) bad("a string");
  } else if (key == "dataset_kwargs" || key == "generation_kwargs") {
    if (!v.is_object()) bad("a mapping");
  } else if (key == "fewshot_config") {
    if (!v.is_object()) bad("a mapping");
  } else if (key == "tag") {
    // The reference's index sorts and registers tag names; a non-string fails there and the
    // task is left out ("not a registered task").
    bool ok = v.is_string();
    if (v.is_array())
      ok = std::all_of(v.begin(), v.end(), [](const Json& t) { return t.is_string(); });
    if (!ok) bad("a tag name or a list of tag names");
  } else if (key == "num_fewshot") {
    if (!v.is_number_integer()) bad("an integer");
  } else if (key == "repeats") {
    if (!v.is_number_integer()) bad("an integer");
    // No responses to filter: the reference fails later with an IndexError (take_first).
    if (v.get<int64_t>() < 1)
      throw UserError("repeats is " + v.dump() + ", so no request is made", where,
                      "an integer of at least 1");
    // Every request is held repeats times over (1000000000 ran out of memory after 49 s, with
    // bad_alloc); the reference sets no bound: docs/fidelity.md.
    if (v.get<int64_t>() > 10000)
      throw UserError("repeats is " + v.dump() + ": every request would be made that many times",
                      where, "an integer from 1 to 10000");
  } else if (key == "unsafe_code" || key == "should_decontaminate") {
    if (!v.is_boolean()) bad("true or false");
  } else if (key == "metric_list" || key == "filter_list") {
    if (!v.is_array()) bad("a list");
  } else if (key == "process_docs" || key == "process_results" || key == "custom_dataset") {
    if (!is_fn(v) && !(key == "process_results" && v.is_string())) bad("!function module.name");
  } else if (key == "doc_to_text" || key == "doc_to_target" ||
             key == "doc_to_decontamination_query") {
    if (!v.is_string() && !v.is_number_integer() && !is_fn(v) &&
        !(key == "doc_to_target" && v.is_array()))
      bad("a field name, a Jinja template, an integer or !function");
  } else if (key == "doc_to_choice") {
    if (!v.is_string() && !v.is_array() && !v.is_object() && !is_fn(v))
      bad("a field name, a template, a list, a mapping or !function");
  }
}

// dataset_kwargs.data_files in the forms `datasets`' load_dataset takes: a path, a list of paths,
// a mapping of split -> path(s), or a list of {split, path} mappings. A number, boolean or null
// where a path goes, or an empty list, fails inside `datasets` (AttributeError "'int' object has
// no attribute 'decode'", StopIteration, ...); refused here at its own line.
void check_data_files(const Json& files, const TaskYaml& yaml) {
  const std::string base = "/dataset_kwargs/data_files";
  auto bad = [&](const std::string& pointer, const std::string& field, const Json& v,
                 const std::string& what) {
    throw UserError((what.empty() ? v.dump() : what) + " is not a file path",
                    yaml.where_at(pointer, field),
                    "a file path or a non-empty list of file paths (datasets' load_dataset fails "
                    "on anything else)");
  };
  auto paths = [&](const Json& v, const std::string& pointer, const std::string& field) {
    if (v.is_string()) return;
    if (!v.is_array()) bad(pointer, field, v, v.is_object() ? "a mapping" : "");
    if (v.empty()) bad(pointer, field, v, "an empty list");
    for (size_t i = 0; i < v.size(); ++i)
      if (!v[i].is_string())
        bad(pointer + "/" + std::to_string(i), field + "[" + std::to_string(i) + "]", v[i],
            v[i].is_object() ? "a mapping" : "");
  };
  const std::string field = "dataset_kwargs.data_files";
  if (files.is_null()) return;
  if (files.is_object()) {
    for (auto it = files.begin(); it != files.end(); ++it)
      paths(it.value(), base + "/" + it.key(), field + "." + it.key());
  } else if (files.is_array() && !files.empty() && files[0].is_object()) {
    for (size_t i = 0; i < files.size(); ++i) {
      std::string p = base + "/" + std::to_string(i), f = field + "[" + std::to_string(i) + "]";
      if (!files[i].is_object() || !files[i].contains("path"))
        throw UserError(f + " is not a {split, path} mapping", yaml.where_at(p, f),
                        "split: <name> and path: <file path(s)>");
      paths(files[i]["path"], p + "/path", f + ".path");
    }
  } else {
    paths(files, base, field);
  }
}

void check_functions(const Json& v) {
  if (is_function_ref(v)) {
    resolve_function_ref(v);
    return;
  }
  if (v.is_object())
    for (const auto& [k, x] : v.items()) check_functions(x);
  if (v.is_array())
    for (const auto& x : v) check_functions(x);
}

// TaskFactory._build_task's PY_TASK route: the class gets the YAML's mapping as it is (its own
// keys, such as unitxt's `recipe`, are not TaskConfig fields), so only `task` and `class` are
// checked here; the YAML is read again by the reference's loader when the class is built.
TaskConfig make_class_task_config(TaskConfig cfg, const Json& merged) {
  const TaskYaml& yaml = cfg.source;
  const Json& cls = merged["class"];
  if (!is_function_ref(cls))
    throw UserError("field 'class' is not a `!function module.Class`", yaml.where("class"),
                    "class: !function module.ClassName (a Task subclass in a module beside "
                    "the YAML)");
  if (!merged.contains("task") || !merged["task"].is_string())
    throw UserError("task YAML has no `task` name", {yaml.path.string(), 1, 1, "task"},
                    "task: <name>");
  cfg.raw["task"] = merged["task"];
  cfg.python_class = cls;
  for (auto it = merged.begin(); it != merged.end(); ++it) {
    if (it.key() == "metadata") {
      cfg.python_class_metadata = it.value();
      continue;
    }
    const Json& own =
        yaml.value.is_object() && yaml.value.contains(it.key()) ? yaml.value[it.key()] : Json();
    if (own != it.value() && !is_function_ref(it.value()))
      cfg.python_class_overrides[it.key()] = it.value();
  }
  return cfg;
}

}  // namespace

TaskConfig make_task_config(const TaskYaml& yaml, const Json& merged, std::string config_source,
                            std::vector<UserError>* collect) {
  TaskConfig cfg;
  cfg.source = yaml;
  cfg.config_source = std::move(config_source);
  if (merged.contains("class")) return make_class_task_config(std::move(cfg), merged);
  const auto& fields = task_config_fields();
  const auto& extra = task_yaml_extra_keys();
  auto report = [&](UserError e) {
    if (!collect) throw e;
    collect->push_back(std::move(e));
  };
  for (auto it = merged.begin(); it != merged.end(); ++it) {
    const std::string& key = it.key();
    auto where = yaml.where(key);
    if (where.field.empty()) where.field = key;
    if (key ==
        "cluster_key") {  // lm-eval's own: a document field or a template (docs/statistics.md)
      if (it.value().is_string() && !it.value().get<std::string>().empty())
        cfg.raw[key] = it.value();
      else
        report(UserError(
            "field 'cluster_key' has the wrong type (" + std::string(it.value().type_name()) + ")",
            where, "a document field name or a Jinja template (a non-empty string)"));
      continue;
    }
    if (std::find(extra.begin(), extra.end(), key) != extra.end()) continue;
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string hint = did_you_mean(key, fields);
      report(UserError("unknown task field '" + key + "'" +
                           (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                       where, "a TaskConfig field (see docs/tasks.md)"));
      continue;
    }
    if (key == "class") continue;
    try {
      check_type(key, it.value(), where);
      if (key == "dataset_kwargs" && it.value().contains("data_files"))
        check_data_files(it.value()["data_files"], yaml);
      check_functions(it.value());
    } catch (UserError& e) {
      report(e);
      continue;
    }
    cfg.raw[key] = it.value();
  }
  cfg.raw.erase("tag");
  if (!cfg.raw.contains("task") || !cfg.raw["task"].is_string())
    report(UserError("task YAML has no `task` name", {yaml.path.string(), 1, 1, "task"},
                     "task: <name>"));
  std::string ot = cfg.output_type();
  static const std::vector<std::string> kTypes = {"loglikelihood", "multiple_choice",
                                                  "loglikelihood_rolling", "generate_until"};
  if (std::find(kTypes.begin(), kTypes.end(), ot) == kTypes.end())
    report(
        UserError("Got invalid output_type '" + ot + "'", yaml.where("output_type"),
                  "one of loglikelihood, multiple_choice, loglikelihood_rolling, generate_until"));
  // TaskConfig.__post_init__: generation_kwargs defaults (key order matters for output).
  std::string fd = cfg.raw.value("fewshot_delimiter", "\n\n");
  if (cfg.has(TaskField::generation_kwargs)) {
    Json& g = cfg.raw["generation_kwargs"];
    // float(temperature): numbers, booleans and numeric text; anything else raises there.
    if (g.contains("temperature")) {
      const Json& t = g["temperature"];
      double d = 0;
      if (t.is_number())
        g["temperature"] = t.get<double>();
      else if (t.is_boolean())
        g["temperature"] = t.get<bool>() ? 1.0 : 0.0;
      else if (t.is_string() && python_float(t.get<std::string>(), d))
        g["temperature"] = d;
      else {
        SourceLocation where = yaml.where("generation_kwargs");
        where.field = "generation_kwargs.temperature";
        report(UserError("temperature " + t.dump() +
                             " is not a number (the reference converts it "
                             "with float())",
                         where, "a number"));
      }
    }
    if (!g.contains("until")) g["until"] = Json::array({fd});
  } else if (ot == "generate_until") {
    Json g = Json::object();
    g["temperature"] = 0.0;
    g["do_sample"] = false;
    g["max_gen_toks"] = 256;
    g["until"] = Json::array({fd});
    cfg.raw["generation_kwargs"] = g;
  }
  if (cfg.has(TaskField::metric_list)) {
    size_t i = 0;
    for (const auto& m : cfg.raw["metric_list"]) {
      if (!m.is_object() || !m.contains("metric"))
        report(
            UserError("'metric' key not provided for an entry in 'metric_list', must be specified!",
                      yaml.where("metric_list"), "metric_list[" + std::to_string(i) + "].metric"));
      ++i;
    }
  }
  return cfg;
}

FewshotConfig resolved_fewshot_config(const TaskConfig& cfg) {
  Json given = cfg.get(TaskField::fewshot_config);
  if (!given.is_object()) given = Json::object();
  auto pick = [&](const std::string& key, TaskField task_field) -> Json {
    if (given.contains(key)) return given[key];
    return cfg.get(task_field);
  };
  FewshotConfig out;
  if (given.contains("sampler")) out.sampler = given["sampler"];
  out.split = pick("split", TaskField::fewshot_split);
  out.process_docs = pick("process_docs", TaskField::process_docs);
  if (given.contains("fewshot_indices")) out.fewshot_indices = given["fewshot_indices"];
  if (given.contains("samples")) out.samples = given["samples"];
  out.doc_to_text = pick("doc_to_text", TaskField::doc_to_text);
  out.doc_to_choice = pick("doc_to_choice", TaskField::doc_to_choice);
  out.doc_to_target = pick("doc_to_target", TaskField::doc_to_target);
  out.gen_prefix = pick("gen_prefix", TaskField::gen_prefix);
  if (Json fd = pick("fewshot_delimiter", TaskField::fewshot_delimiter); !fd.is_null())
    out.fewshot_delimiter = fd;
  if (Json td = pick("target_delimiter", TaskField::target_delimiter); !td.is_null())
    out.target_delimiter = td;
  return out;
}

Json FewshotConfig::to_json() const {
  Json out = Json::object();
  out["sampler"] = sampler;
  out["split"] = split;
  out["process_docs"] = process_docs;
  out["fewshot_indices"] = fewshot_indices;
  out["samples"] = samples;
  out["doc_to_text"] = doc_to_text;
  out["doc_to_choice"] = doc_to_choice;
  out["doc_to_target"] = doc_to_target;
  out["gen_prefix"] = gen_prefix;
  out["fewshot_delimiter"] = fewshot_delimiter;
  out["target_delimiter"] = target_delimiter;
  return out;
}

// `in_fewshot`: inside fewshot_config or filter_list, whose functions the reference shows as
// repr(fn).
static Json display_functions(const Json& v, bool in_fewshot = false) {
  if (is_function_ref(v)) {
    try {
      const TaskFunction& fn = resolve_function_ref(v);
      // A C++ port of a module's `def`: that def's source, as the reference's getsource shows.
      if (!in_fewshot && v.contains("source")) return v["source"];
      return in_fewshot && !fn.repr.empty() ? fn.repr : fn.display;
    } catch (...) {
      return function_ref_name(v);
    }
  }
  if (v.is_object()) {
    Json o = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it)
      o[it.key()] = display_functions(it.value(), in_fewshot);
    return o;
  }
  if (v.is_array()) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(display_functions(x, in_fewshot));
    return a;
  }
  return v;
}

Json task_config_to_results(const TaskConfig& cfg, std::optional<int> num_fewshot) {
  // Defaults of the dataclass that are not None appear even when the YAML omits them.
  Json out = Json::object();
  for (const auto& f : task_config_fields()) {
    if (f == "tag") continue;
    Json v = cfg.get(f);
    if (f == "num_fewshot" && num_fewshot) v = *num_fewshot;
    if (v.is_null()) {
      if (f == "unsafe_code")
        v = false;
      else if (f == "description")
        v = "";
      else if (f == "target_delimiter")
        v = " ";
      else if (f == "fewshot_delimiter")
        v = "\n\n";
      else if (f == "output_type")
        v = "generate_until";
      else if (f == "repeats")
        v = 1;
      else if (f == "should_decontaminate")
        v = false;
      else if (f == "fewshot_config")
        v = resolved_fewshot_config(cfg).to_json();
      else
        continue;
    } else if (f == "fewshot_config") {
      v = resolved_fewshot_config(cfg).to_json();
    }
    out[f] = display_functions(v, f == "fewshot_config" || f == "filter_list");
  }
  return out;
}

GroupConfig make_group_config(const TaskYaml& yaml, const Json& merged,
                              std::vector<UserError>* collect) {
  GroupConfig g;
  g.source = yaml;
  auto report = [&](UserError e) {
    if (!collect) throw e;
    collect->push_back(std::move(e));
  };
  for (auto it = merged.begin(); it != merged.end(); ++it) {
    const std::string& k = it.key();
    const Json& v = it.value();
    if (k == "group") {
      if (!v.is_string())
        report(UserError("group name must be a string", yaml.where(k), "a string"));
      else
        g.name = v.get<std::string>();
    } else if (k == "group_alias") {
      if (v.is_string()) g.alias = v.get<std::string>();
    } else if (k == "task") {
      if (v.is_string())
        g.task = Json::array({v});
      else if (v.is_array() && !v.empty())
        g.task = v;
      else if (v.is_array())  // the reference evaluates nothing and reports an empty group
        report(UserError("group `task` is an empty list: the group has nothing to evaluate",
                         yaml.where(k), "at least one task, group or tag name"));
      else
        report(UserError("group `task` must be a name or a list", yaml.where(k),
                         "a list of task names or mappings"));
    } else if (k == "aggregate_metric_list") {
      Json list = v.is_object() ? Json::array({v}) : v;
      if (!list.is_array()) {
        report(UserError("aggregate_metric_list must be a mapping or a list", yaml.where(k),
                         "a list of {metric, ...}"));
        continue;
      }
      for (const auto& e : list) {
        if (!e.is_object() || !e.contains("metric")) {
          report(UserError("aggregate_metric_list entry without `metric`", yaml.where(k),
                           "{metric: name, weight_by_size: true}"));
          continue;
        }
        for (auto jt = e.begin(); jt != e.end(); ++jt) {
          static const std::vector<std::string> ok = {"metric", "filter_list", "aggregation",
                                                      "weight_by_size"};
          if (std::find(ok.begin(), ok.end(), jt.key()) == ok.end())
            report(UserError("unknown aggregate_metric_list key '" + jt.key() + "'", yaml.where(k),
                             "metric, filter_list, aggregation, weight_by_size"));
        }
        std::string agg = e.value("aggregation", "mean");
        if (agg != "mean")
          report(
              UserError("Currently, 'mean' is the only pre-defined aggregation. Got '" + agg + "'.",
                        yaml.where(k), "aggregation: mean"));
        Json n = Json::object();
        n["metric"] = e["metric"];
        Json fl = e.contains("filter_list") ? e["filter_list"] : Json();
        if (fl.is_string()) fl = Json::array({fl});
        n["filter_list"] = fl;
        n["aggregation"] = "mean";
        n["weight_by_size"] = e.contains("weight_by_size") ? e["weight_by_size"] : Json(true);
        g.aggregate_metric_list.push_back(n);
      }
    } else if (k == "metadata") {
      g.metadata = v.is_object() ? v : Json::object();
    } else {
      g.overrides[k] = v;
    }
  }
  return g;
}

DatasetRef dataset_ref(const TaskConfig& cfg) {
  DatasetRef ref;
  ref.path = cfg.str(TaskField::dataset_path);
  const Json& n = cfg.get(TaskField::dataset_name);
  if (n.is_string())
    ref.name = n.get<std::string>();
  else if (n.is_number())
    ref.name = py::str(n);
  if (cfg.get(TaskField::dataset_kwargs).is_object())
    ref.kwargs = cfg.get(TaskField::dataset_kwargs);
  ref.base_dir = cfg.source.path.parent_path();
  return ref;
}

}  // namespace lmeval

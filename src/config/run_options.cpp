// The run flag table (config/run_options.hpp): one entry per flag, read by every consumer.
#include "lmeval/config/run_options.hpp"

#include <algorithm>
#include <sstream>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/config/shard_spec.hpp"
#include "lmeval/core/input_checks.hpp"

// Each entry names only the members it sets (designated initializers); GCC 12 would warn about
// every member left to its default. (Popped at the end: unity builds join files.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace lmeval {

namespace {

// ---- YAML values (the reference's EvaluatorConfig field types) ----

// A dict-typed field from YAML: a mapping, or a string parsed with simple_parse_args_string.
Json dict_field(const Json& v, const SourceLocation& where, const std::string& key) {
  if (v.is_object()) return v;
  if (v.is_null()) return Json::object();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (key == "metadata" || key == "samples") {
      require_json_nesting(s, where);
      try {
        Json j = Json::parse(s);
        if (j.is_object()) return j;
      } catch (...) {
      }
    }
    return simple_parse_args_string(s);
  }
  throw UserError("'" + key + "' has the wrong type", where, "a mapping or a k=v,k=v string");
}

std::optional<std::string> opt_string(const Json& v, const SourceLocation& where,
                                      const std::string& key) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  throw UserError("'" + key + "' has the wrong type", where, "a string");
}

bool truthy_bool(const Json& v, const SourceLocation& where, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_null()) return false;
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  if (v.is_string()) {
    std::string l = v.get<std::string>();
    for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == "true" || l == "1" || l == "yes") return true;
    if (l == "false" || l == "0" || l == "no" || l.empty()) return false;
  }
  throw UserError("'" + key + "' has the wrong type", where, "true or false");
}

// str.split(","): empty names kept, as the reference's process_tasks keeps them.
void split_task_names(const std::string& s, std::vector<std::string>& out) {
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ',') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
}

bool parse_bool_text(const std::string& s) {
  std::string l = s;
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == "true" || l == "1" || l == "yes";
}

// ---- shard-file JSON of one field ----

template <class T>
Json put(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}
template <class T>
Json put(const T& v) {
  return Json(v);
}
Json put(const std::vector<std::optional<int64_t>>& v) {
  Json a = Json::array();
  for (const auto& x : v) a.push_back(put(x));
  return a;
}

template <class T>
void get(const Json& j, const char* key, std::optional<T>& v) {
  if (!j.contains(key)) return;
  if (j[key].is_null())
    v.reset();
  else
    v = j[key].get<T>();
}
template <class T>
void get(const Json& j, const char* key, T& v) {
  if (j.contains(key)) v = j[key].get<T>();
}
void get(const Json& j, const char* key, std::vector<std::optional<int64_t>>& v) {
  if (!j.contains(key)) return;
  v.clear();
  for (const auto& x : j[key])
    v.push_back(x.is_null() ? std::nullopt : std::optional<int64_t>(x.get<int64_t>()));
}

// `o` with its shard-file JSON read from and written to the EvalConfig member `m`.
template <class T>
RunOption field(T EvalConfig::*m, RunOption o) {
  std::string key = o.key;
  o.to_json = [m, key](const EvalConfig& c, Json& j) { j[key] = put(c.*m); };
  o.from_json = [m, key](EvalConfig& c, const Json& j) { get(j, key.c_str(), c.*m); };
  return o;
}

// A results-config entry written as the shard file writes it.
template <class T>
RunOption in_results(T EvalConfig::*m, int rank, RunOption o) {
  std::string key = o.key;
  o.results_rank = rank;
  o.to_results = [m, key](const EvalConfig& c, Json& j) { j[key] = put(c.*m); };
  return field(m, std::move(o));
}

// A boolean --x flag that sets `m`, and its YAML key.
RunOption bool_flag(bool EvalConfig::*m, const std::string& key, std::vector<std::string> flags,
                    std::string help) {
  RunOption o{
      .key = key, .flags = std::move(flags), .help = std::move(help), .kind = OptionKind::Flag};
  o.from_cli = [m](EvalConfig& c, const CliValue&) { c.*m = true; };
  o.from_yaml = [m, key](EvalConfig& c, const Json& v, const SourceLocation& w) {
    c.*m = truthy_bool(v, w, key);
  };
  return field(m, std::move(o));
}

// An optional-string flag (a path or a name) that sets `m`, and its YAML key.
RunOption text_flag(std::optional<std::string> EvalConfig::*m, const std::string& key,
                    std::vector<std::string> flags, std::string help) {
  RunOption o{
      .key = key, .flags = std::move(flags), .help = std::move(help), .kind = OptionKind::Text};
  o.from_cli = [m](EvalConfig& c, const CliValue& v) { c.*m = v.text; };
  o.from_yaml = [m, key](EvalConfig& c, const Json& v, const SourceLocation& w) {
    c.*m = opt_string(v, w, key);
  };
  return field(m, std::move(o));
}

// A Python-only logging integration: parsed, then refused (flag or non-empty YAML value).
RunOption refused_integration(const std::string& key) {
  RunOption o{.key = key,
              .flags = {"--" + key},
              .help = "(Python-only integration; refused)",
              .kind = OptionKind::AnyTexts,
              .refused = true};
  o.from_cli = [key](EvalConfig&, const CliValue&) {
    throw UserError("--" + key + " is a Python-only logging integration and is not supported",
                    {"", 0, 0, "--" + key}, "results written with --output_path");
  };
  o.from_yaml = [key](EvalConfig&, const Json& v, const SourceLocation& where) {
    if (!(v.is_null() || (v.is_object() && v.empty()) ||
          (v.is_string() && v.get<std::string>().empty())))
      throw UserError("'" + key + "' is not supported by lm-eval (Python-only logging integration)",
                      where, "remove the key; write results with output_path instead");
  };
  return o;
}

std::vector<RunOption> build_table() {
  std::vector<RunOption> t;
  auto add = [&](RunOption o) { t.push_back(std::move(o)); };

  // --config is applied first (flags override it): cli/run_options.cpp loads the file.
  add(text_flag(&EvalConfig::config, "config", {"--config", "-C"},
                "YAML file with run settings (flags override it)"));
  t.back().for_validate = true;

  add(field(&EvalConfig::tasks,
            RunOption{.key = "tasks",
                      .flags = {"--tasks", "-t"},
                      .help = "Task, group or tag names, globs, YAML files or a directory (comma "
                              "separated)",
                      .kind = OptionKind::CommaTexts,
                      .for_validate = true,
                      // SplitArgs: every value split on ',', empty names kept (select_tasks
                      // refuses them).
                      .from_cli =
                          [](EvalConfig& c, const CliValue& v) {
                            c.tasks.clear();
                            for (const auto& t : v.texts) split_task_names(t, c.tasks);
                          },
                      .from_yaml =
                          [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                            c.tasks.clear();
                            auto add_names = [&](const std::string& s) {
                              split_task_names(s, c.tasks);
                            };
                            if (v.is_string()) {
                              add_names(v.get<std::string>());
                            } else if (v.is_array()) {
                              for (const auto& n : v) {
                                if (!n.is_string())
                                  throw UserError("task names must be strings", where,
                                                  "a list of strings");
                                add_names(n.get<std::string>());
                              }
                            } else {
                              throw UserError("'tasks' has the wrong type", where,
                                              "a comma-separated string or a list");
                            }
                          }}));

  add(in_results(&EvalConfig::model, 1,
                 RunOption{.key = "model",
                           .flags = {"--model", "-M"},
                           .help = "Model backend: hf, dummy, ... (default hf)",
                           .kind = OptionKind::Text,
                           .for_validate = true,
                           .from_cli = [](EvalConfig& c, const CliValue& v) { c.model = v.text; },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                                 c.model = opt_string(v, w, "model").value_or("hf");
                               }}));

  add(in_results(&EvalConfig::model_args, 2,
                 RunOption{.key = "model_args",
                           .flags = {"--model_args", "-a"},
                           .help = "Model arguments: k=v,k=v or a JSON object",
                           .kind = OptionKind::Texts,
                           .for_validate = true,
                           .from_cli =
                               [](EvalConfig& c, const CliValue& v) {
                                 if (!v.occurrences.empty())
                                   c.model_args = merge_dict_flag(v.occurrences, "--model_args");
                               },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                                 c.model_args = dict_field(v, w, "model_args");
                               }}));

  add(text_flag(&EvalConfig::include_path, "include_path", {"--include_path"},
                "Extra folder(s) of task YAMLs, separated by ':'"));
  t.back().for_validate = true;
  add(text_flag(&EvalConfig::data_dir, "data_dir", {"--data_dir"},
                "Local datasets as <org>/<name>/<config>/<split>.jsonl (env LMEVAL_DATA_DIR)"));
  t.back().for_validate = true;

  // MergeDictAction, as --model_args: `k=v` values (each a k=v,k=v list, values by
  // handle_cli_value_string) or a JSON object; the reference merges the result over model_args.
  add(field(&EvalConfig::metadata,
            RunOption{.key = "metadata",
                      .flags = {"--metadata"},
                      .help = "Task metadata: k=v k=v (values as Python literals) or a JSON object",
                      .kind = OptionKind::Texts,
                      .for_validate = true,
                      .from_cli =
                          [](EvalConfig& c, const CliValue& v) {
                            if (!v.occurrences.empty())
                              c.metadata = merge_dict_flag(v.occurrences, "--metadata");
                          },
                      .from_yaml =
                          [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                            c.metadata = dict_field(v, w, "metadata");
                          }}));

  add(text_flag(&EvalConfig::output_path, "output_path", {"--output_path", "-o"},
                "Directory (or .json file) for results"));
  t.back().for_validate = true;

  add(in_results(&EvalConfig::gen_kwargs, 8,
                 RunOption{.key = "gen_kwargs",
                           .flags = {"--gen_kwargs"},
                           .help = "Generation arguments for generate_until tasks",
                           .kind = OptionKind::Texts,
                           .for_validate = true,
                           .from_cli =
                               [](EvalConfig& c, const CliValue& v) {
                                 if (!v.occurrences.empty())
                                   c.gen_kwargs = merge_dict_flag(v.occurrences, "--gen_kwargs");
                               },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                                 c.gen_kwargs = dict_field(v, w, "gen_kwargs");
                               }}));

  add(field(
      &EvalConfig::num_fewshot,
      RunOption{.key = "num_fewshot",
                .flags = {"--num_fewshot", "-f"},
                .help = "Number of few-shot examples",
                .kind = OptionKind::Int,
                .from_cli = [](EvalConfig& c, const CliValue& v) { c.num_fewshot = v.integer; },
                .from_yaml =
                    [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                      if (v.is_null())
                        c.num_fewshot.reset();
                      else if (v.is_number_integer())
                        c.num_fewshot = v.get<int>();
                      else
                        throw UserError("'num_fewshot' must be an integer", where, "an integer");
                    }}));

  add(in_results(
      &EvalConfig::batch_size, 3,
      RunOption{.key = "batch_size",
                .flags = {"--batch_size", "-b"},
                .help = "Batch size: N, auto or auto:N",
                .kind = OptionKind::Text,
                .from_cli = [](EvalConfig& c, const CliValue& v) { c.batch_size = v.text; },
                .from_yaml =
                    [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                      if (v.is_number_integer() || v.is_string())
                        c.batch_size = v;
                      else
                        throw UserError("'batch_size' has the wrong type", where,
                                        "an integer, auto or auto:N");
                    }}));

  add(field(
      &EvalConfig::max_batch_size,
      RunOption{.key = "max_batch_size",
                .flags = {"--max_batch_size"},
                .help = "Upper bound for auto batch size",
                .kind = OptionKind::Int,
                .from_cli = [](EvalConfig& c, const CliValue& v) { c.max_batch_size = v.integer; },
                .from_yaml =
                    [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                      if (v.is_null())
                        c.max_batch_size.reset();
                      else if (v.is_number_integer())
                        c.max_batch_size = v.get<int>();
                      else
                        throw UserError("'max_batch_size' must be an integer", where, "an integer");
                    }}));

  add(in_results(&EvalConfig::device, 4,
                 RunOption{.key = "device",
                           .flags = {"--device"},
                           .help = "Device: cpu, cuda, cuda:N (default cuda:0, falls back to cpu)",
                           .kind = OptionKind::Text,
                           // device_given: only a device the user named is passed to the model.
                           .from_cli =
                               [](EvalConfig& c, const CliValue& v) {
                                 c.device = v.text;
                                 c.device_given = true;
                               },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                                 c.device = opt_string(v, w, "device").value_or("cuda:0");
                                 c.device_given = !v.is_null();
                               }}));

  add(in_results(&EvalConfig::limit, 6,
                 RunOption{.key = "limit",
                           .flags = {"--limit", "-L"},
                           .help = "Documents per task (< 1: a fraction). For testing only",
                           .kind = OptionKind::Number,
                           .from_cli = [](EvalConfig& c, const CliValue& v) { c.limit = v.number; },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                                 if (v.is_null())
                                   c.limit.reset();
                                 else if (v.is_number())
                                   c.limit = v.get<double>();
                                 else
                                   throw UserError("'limit' must be a number", where,
                                                   "a number (< 1: a fraction)");
                               }}));

  add(field(&EvalConfig::samples,
            RunOption{.key = "samples",
                      .flags = {"--samples", "-E"},
                      .help = "JSON {task: [doc indices]} or a file with it",
                      .kind = OptionKind::Text,
                      .from_cli = [](EvalConfig& c, const CliValue& v) { c.samples = v.text; },
                      .from_yaml =
                          [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                            if (v.is_null())
                              c.samples = nullptr;
                            else if (v.is_object())
                              c.samples = v;
                            // JSON text or a file path, resolved in finalize
                            else if (v.is_string())
                              c.samples = v;
                            else
                              throw UserError("'samples' has the wrong type", where,
                                              "a mapping {task: [indices]}");
                          }}));

  {
    RunOption o = text_flag(&EvalConfig::use_cache, "use_cache", {"--use_cache", "-c"},
                            "Response cache path prefix");
    o.results_rank = 5;
    o.to_results = [](const EvalConfig& c, Json& j) { j["use_cache"] = put(c.use_cache); };
    add(std::move(o));
  }

  add(field(
      &EvalConfig::cache_requests,
      RunOption{
          .key = "cache_requests",
          .flags = {"--cache_requests"},
          .help = "true | refresh | delete",
          .kind = OptionKind::OptionalText,
          .choices = {"true", "refresh", "delete"},
          .from_cli =
              [](EvalConfig& c, const CliValue& v) {
                std::string s = v.text.empty() ? "true" : v.text;
                c.cache_requests = Json::object();
                if (s == "true") c.cache_requests["cache_requests"] = true;
                if (s == "refresh")
                  c.cache_requests = {{"cache_requests", true}, {"rewrite_requests_cache", true}};
                if (s == "delete") c.cache_requests = {{"delete_requests_cache", true}};
              },
          .from_yaml =
              [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                if (v.is_null() || v.is_object())
                  c.cache_requests = v.is_null() ? Json::object() : v;
                else
                  throw UserError("'cache_requests' has the wrong type", where, "a mapping");
              }}));

  add(bool_flag(&EvalConfig::check_integrity, "check_integrity", {"--check_integrity"},
                "(reference only; refused)"));
  t.back().refused = true;
  t.back().from_cli = [](EvalConfig&, const CliValue&) {
    throw UserError("--check_integrity runs the reference's Python test suite and is not supported",
                    {"", 0, 0, "--check_integrity"}, "`lm-eval validate` to check task configs");
  };

  add(bool_flag(&EvalConfig::write_out, "write_out", {"--write_out", "-w"},
                "Print the first document's prompt of each task"));
  add(bool_flag(&EvalConfig::log_samples, "log_samples", {"--log_samples", "-s"},
                "Write per-sample JSONL files"));
  add(bool_flag(&EvalConfig::log_repeat_scores, "log_repeat_scores", {"--log_repeat_scores"},
                "With --log_samples: also write each sampled answer's scores (`repeat_scores`) "
                "in the records of tasks with repeats > 1, for analyze/report (the reference "
                "writes no such key)"));
  add(text_flag(&EvalConfig::system_instruction, "system_instruction", {"--system_instruction"},
                "System prompt"));

  add(field(&EvalConfig::apply_chat_template,
            RunOption{.key = "apply_chat_template",
                      .flags = {"--apply_chat_template"},
                      .help = "Apply the tokenizer's chat template (optionally a named one)",
                      .kind = OptionKind::OptionalText,
                      .from_cli =
                          [](EvalConfig& c, const CliValue& v) {
                            c.apply_chat_template = v.text.empty() ? Json(true) : Json(v.text);
                          },
                      .from_yaml =
                          [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                            if (v.is_boolean() || v.is_string())
                              c.apply_chat_template = v;
                            else if (v.is_null())
                              c.apply_chat_template = false;
                            else
                              throw UserError("'apply_chat_template' has the wrong type", where,
                                              "true/false or a template name");
                          }}));

  add(field(&EvalConfig::fewshot_as_multiturn,
            RunOption{.key = "fewshot_as_multiturn",
                      .flags = {"--fewshot_as_multiturn"},
                      .help = "Few-shot examples as chat turns (true/false)",
                      .kind = OptionKind::OptionalText,
                      .from_cli =
                          [](EvalConfig& c, const CliValue& v) {
                            c.fewshot_as_multiturn =
                                v.text.empty() ? true : parse_bool_text(v.text);
                          },
                      .from_yaml =
                          [](EvalConfig& c, const Json& v, const SourceLocation& w) {
                            if (v.is_null())
                              c.fewshot_as_multiturn.reset();
                            else
                              c.fewshot_as_multiturn = truthy_bool(v, w, "fewshot_as_multiturn");
                          }}));

  add(bool_flag(&EvalConfig::show_config, "show_config", {"--show_config"},
                "Print the full results JSON"));
  add(text_flag(&EvalConfig::verbosity, "verbosity", {"--verbosity", "-v"},
                "Log level (DEBUG, INFO, WARNING, ERROR)"));
  add(bool_flag(&EvalConfig::predict_only, "predict_only", {"--predict_only", "-x"},
                "Only save model outputs (implies --log_samples)"));

  {
    RunOption o{
        .key = "seed",
        .flags = {"--seed"},
        .help = "Seeds: python,numpy,torch,fewshot (default 0,1234,1234,1234)",
        .kind = OptionKind::Text,
        .from_cli = [](EvalConfig& c, const CliValue& v) { c.seed = parse_seed(v.text); },
        .from_yaml = [](EvalConfig& c, const Json& v,
                        const SourceLocation& where) { c.seed = normalize_seed(v, where); }};
    o = field(&EvalConfig::seed, std::move(o));
    // The reference's config block names the four seeds.
    o.results_rank = 9;
    o.to_results = [](const EvalConfig& c, Json& j) {
      const char* names[] = {"random_seed", "numpy_seed", "torch_seed", "fewshot_seed"};
      for (int i = 0; i < 4; ++i) j[names[i]] = c.seed[i] ? Json(*c.seed[i]) : Json();
    };
    add(std::move(o));
  }

  add(field(
      &EvalConfig::fewshot_seeds,
      RunOption{
          .key = "fewshot_seeds",
          .flags = {"--fewshot_seeds"},
          .help = "Evaluate once per few-shot sampler seed, e.g. 1234,1,2,3,4; reports "
                  "mean, std, min, max across seeds (first seed = results)",
          .kind = OptionKind::Text,
          .from_cli =
              [](EvalConfig& c, const CliValue& v) {
                c.fewshot_seeds = parse_fewshot_seeds(Json(v.text), {"", 0, 0, "--fewshot_seeds"});
              },
          .from_yaml =
              [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                if (v.is_null())
                  c.fewshot_seeds.clear();
                else
                  c.fewshot_seeds = parse_fewshot_seeds(v, where);
              }}));

  // EvaluatorConfig._set_trust_remote_code: model_args gain trust_remote_code=True
  // (EvalConfig::finalize); lm-eval's datasets run no loading scripts, so that half has nothing to
  // allow.
  add(bool_flag(&EvalConfig::trust_remote_code, "trust_remote_code", {"--trust_remote_code"},
                "Let the model folder's own code run (adds trust_remote_code=True to model_args)"));

  add(bool_flag(&EvalConfig::confirm_run_unsafe_code, "confirm_run_unsafe_code",
                {"--confirm_run_unsafe_code"}, "Allow tasks marked unsafe_code"));

  add(in_results(&EvalConfig::bootstrap_iters, 7,
                 RunOption{.key = "bootstrap_iters",
                           .flags = {"--bootstrap_iters"},
                           .help = "Bootstrap iterations for stderr (default 100000)",
                           .kind = OptionKind::Int64,
                           .from_cli = [](EvalConfig& c,
                                          const CliValue& v) { c.bootstrap_iters = v.integer64; },
                           .from_yaml =
                               [](EvalConfig& c, const Json& v, const SourceLocation& where) {
                                 if (!v.is_number_integer())
                                   throw UserError("'bootstrap_iters' must be an integer", where,
                                                   "an integer");
                                 c.bootstrap_iters = v.get<int64_t>();
                               }}));

  add(bool_flag(&EvalConfig::show_ci, "show_ci", {"--show_ci"},
                "Show confidence intervals in the table"));
  add(bool_flag(&EvalConfig::continuous_metrics, "continuous_metrics", {"--continuous_metrics"},
                "Add p_correct and logprob_gold_margin to every multiple_choice task"));

  // Not a YAML key and not recorded: the table shows normalised scores whenever it can.
  add(RunOption{.key = "show_normalized",
                .flags = {"--show_normalized"},
                .help = "Accepted for compatibility: normalised scores are shown whenever a task "
                        "has a random baseline",
                .kind = OptionKind::Flag,
                .from_cli = [](EvalConfig&, const CliValue&) {}});

  // Not a YAML key: a part of a run is chosen per machine. The shard file records I and N.
  add(RunOption{.key = "shard",
                .flags = {"--shard"},
                .help = "I/N: answer the I-th of N parts of the requests and write a partial file "
                        "for `lm-eval merge`",
                .kind = OptionKind::Text,
                .from_cli =
                    [](EvalConfig& c, const CliValue& v) {
                      ShardSpec s = parse_shard_spec(v.text);
                      c.shard_index = s.index;
                      c.shard_count = s.count;
                    },
                .to_json =
                    [](const EvalConfig& c, Json& j) {
                      j["shard_index"] = c.shard_index;
                      j["shard_count"] = c.shard_count;
                    },
                .from_json =
                    [](EvalConfig& c, const Json& j) {
                      get(j, "shard_index", c.shard_index);
                      get(j, "shard_count", c.shard_count);
                    }});

  // MergeDictAction dicts, as --metadata: EvaluationTracker's and WandbLogger's keyword arguments
  // (output/hub_push.hpp, output/wandb_log.hpp).
  auto integration = [&](Json EvalConfig::*m, const std::string& key, std::string help) {
    add(field(m, RunOption{.key = key,
                           .flags = {"--" + key},
                           .help = std::move(help),
                           .kind = OptionKind::Texts,
                           .for_validate = true,
                           .from_cli =
                               [m, key](EvalConfig& c, const CliValue& v) {
                                 if (!v.occurrences.empty())
                                   c.*m = merge_dict_flag(v.occurrences, "--" + key);
                               },
                           .from_yaml =
                               [m, key](EvalConfig& c, const Json& v, const SourceLocation& w) {
                                 c.*m = dict_field(v, w, key);
                               }}));
  };
  integration(&EvalConfig::wandb_args, "wandb_args",
              "Weights & Biases init arguments key=val key2=val2 (the active Python "
              "environment's wandb package)");
  integration(&EvalConfig::wandb_config_args, "wandb_config_args",
              "Weights & Biases config arguments key=val key2=val2");
  integration(&EvalConfig::hf_hub_log_args, "hf_hub_log_args",
              "Hugging Face Hub logging arguments key=val key2=val2 (token from HF_TOKEN)");
  add(refused_integration("trackio_args"));

  // Range checks (config/flag_checks.hpp), run in this order by check_setting_ranges for flags
  // and --config values alike.
  auto check = [&](const std::string& key, std::function<void(const EvalConfig&)> f) {
    for (auto& o : t)
      if (o.key == key) {
        o.check = std::move(f);
        return;
      }
  };
  static constexpr int64_t kMaxInt = 2147483647;
  check("limit", [](const EvalConfig& c) {
    if (c.limit) check_limit(*c.limit);
  });
  check("num_fewshot", [](const EvalConfig& c) {
    if (c.num_fewshot) check_int_range(*c.num_fewshot, "--num_fewshot", 0, kMaxInt);
  });
  check("max_batch_size", [](const EvalConfig& c) {
    if (c.max_batch_size) check_int_range(*c.max_batch_size, "--max_batch_size", 1, kMaxInt);
  });
  check("bootstrap_iters", [](const EvalConfig& c) {
    check_int_range(c.bootstrap_iters, "--bootstrap_iters", 0, kMaxInt);
  });
  check("batch_size", [](const EvalConfig& c) {
    if (c.batch_size.is_string())
      check_batch_size(c.batch_size.get<std::string>(), "--batch_size");
    else if (c.batch_size.is_number_integer())
      check_int_range(c.batch_size.get<int64_t>(), "--batch_size", 1, kMaxBatchSize);
  });
  check("verbosity", [](const EvalConfig& c) {
    if (c.verbosity) check_verbosity(*c.verbosity);
  });
  check("include_path", [](const EvalConfig& c) {
    if (c.include_path) check_include_path(*c.include_path);
  });
  return t;
}

}  // namespace

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> table = build_table();
  return table;
}

const RunOption* find_run_option(const std::string& key) {
  for (const auto& o : run_options())
    if (o.key == key) return &o;
  return nullptr;
}

Json results_config(const EvalConfig& cfg, const Json& model_info, const Json& batch_sizes) {
  std::vector<const RunOption*> ranked;
  for (const auto& o : run_options())
    if (o.results_rank > 0) ranked.push_back(&o);
  std::sort(ranked.begin(), ranked.end(), [](const RunOption* a, const RunOption* b) {
    return a->results_rank < b->results_rank;
  });
  Json config = Json::object();
  for (const RunOption* o : ranked) {
    o->to_results(cfg, config);
    if (o->key == "model_args")
      for (auto it = model_info.begin(); it != model_info.end(); ++it)
        config[it.key()] = it.value();
    if (o->key == "batch_size") config["batch_sizes"] = batch_sizes;
  }
  return config;
}

std::vector<std::string> run_option_doc_rows() {
  static const EvalConfig defaults;
  Json dflt = Json::object();
  for (const auto& o : run_options())
    if (o.to_json) o.to_json(defaults, dflt);
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::vector<std::string> rows;
  for (const auto& o : run_options()) {
    std::string flags;
    for (const auto& f : o.flags) flags += (flags.empty() ? "" : ", ") + ("`" + f + "`");
    std::string takes;
    switch (o.kind) {
      case OptionKind::Flag:
        takes = "-";
        break;
      case OptionKind::Text:
        takes = "text";
        break;
      case OptionKind::OptionalText:
        takes = "[text]";
        break;
      case OptionKind::Texts:
        takes = "text ...";
        break;
      case OptionKind::CommaTexts:
        takes = "a,b ...";
        break;
      case OptionKind::AnyTexts:
        takes = "(refused)";
        break;
      case OptionKind::Int:
      case OptionKind::Int64:
        takes = "int";
        break;
      case OptionKind::Number:
        takes = "number";
        break;
    }
    if (!o.choices.empty()) {
      takes.clear();
      for (const auto& c : o.choices) takes += (takes.empty() ? "" : " \\| ") + c;
    }
    std::string d;
    if (o.kind != OptionKind::Flag && dflt.contains(o.key)) {
      const Json& v = dflt[o.key];
      d = v.is_null() ? "None" : v.is_string() ? v.get<std::string>() : v.dump();
      d = d.empty() ? "" : "`" + d + "`";
    }
    rows.push_back("| " + flags + " | " + takes + " | " + d + " | " + escape(o.help) + " |");
  }
  return rows;
}

}  // namespace lmeval

#pragma GCC diagnostic pop

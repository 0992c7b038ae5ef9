// EvalConfig: YAML config application, validation and the reference's normalisation steps.
#include "lmeval/config/eval_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"

namespace lmeval {

const std::vector<std::string>& eval_config_keys() {
  static const std::vector<std::string> keys = {
      "config", "model", "model_args", "tasks", "num_fewshot", "batch_size", "max_batch_size",
      "device", "limit", "samples", "use_cache", "cache_requests", "check_integrity",
      "write_out", "log_samples", "output_path", "predict_only", "system_instruction",
      "apply_chat_template", "fewshot_as_multiturn", "show_config", "include_path",
      "gen_kwargs", "verbosity", "wandb_args", "wandb_config_args", "trackio_args",
      "hf_hub_log_args", "seed", "trust_remote_code", "confirm_run_unsafe_code", "metadata",
      "bootstrap_iters", "data_dir", "show_ci", "continuous_metrics",
      "fewshot_seeds"};
  return keys;
}

std::vector<std::optional<int64_t>> normalize_seed(const Json& value, const SourceLocation& where) {
  std::vector<Json> items;
  if (value.is_array()) {
    for (const auto& v : value) items.push_back(v);
  } else {
    items.push_back(value);
  }
  auto to_seed = [&](const Json& v) -> std::optional<int64_t> {
    if (v.is_null()) return std::nullopt;
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) return static_cast<int64_t>(v.get<double>());
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      std::string l = s;
      for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      while (!l.empty() && l.back() == ' ') l.pop_back();
      while (!l.empty() && l.front() == ' ') l.erase(0, 1);
      if (l == "none") return std::nullopt;
      try {
        size_t pos;
        int64_t n = std::stoll(l, &pos);
        if (pos == l.size()) return n;
      } catch (...) {
      }
      throw UserError(s + " is not an integer or None", where, "integers or None");
    }
    throw UserError(v.dump() + " is not an integer or None", where, "integers or None");
  };
  std::vector<std::optional<int64_t>> out;
  for (const auto& v : items) out.push_back(to_seed(v));
  if (out.size() == 1) return {out[0], out[0], out[0], out[0]};
  if (out.size() == 3) {
    out.push_back(1234);
    return out;
  }
  if (out.size() != 4)
    throw UserError("Argument requires 4 integers or None, separated by ','", where,
                    "1, 3 or 4 values");
  return out;
}

std::vector<std::optional<int64_t>> parse_seed(const std::string& value) {
  Json items = Json::array();
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) items.push_back(item);
  if (!value.empty() && value.back() == ',') items.push_back("");
  return normalize_seed(items, {"", 0, 0, "--seed"});
}

std::vector<int64_t> parse_fewshot_seeds(const Json& value, const SourceLocation& where) {
  std::vector<Json> items;
  if (value.is_array()) {
    for (const auto& v : value) items.push_back(v);
  } else if (value.is_string()) {
    std::stringstream ss(value.get<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) items.push_back(item);
  } else if (value.is_number_integer()) {
    items.push_back(value);
  } else {
    throw UserError("fewshot_seeds has the wrong type: " + value.dump(), where,
                    "integers separated by ',' (e.g. 1234,1,2,3,4) or a list of integers");
  }
  std::vector<int64_t> out;
  for (const auto& v : items) {
    std::optional<int64_t> n;
    if (v.is_number_integer()) n = v.get<int64_t>();
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      while (!s.empty() && s.back() == ' ') s.pop_back();
      while (!s.empty() && s.front() == ' ') s.erase(0, 1);
      try {
        size_t pos = 0;
        int64_t k = std::stoll(s, &pos);
        if (pos == s.size()) n = k;
      } catch (...) {
      }
    }
    if (!n)
      throw UserError("fewshot seed " + (v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump()) +
                          " is not an integer",
                      where, "integers separated by ',' (e.g. 1234,1,2,3,4)");
    // A repeated seed would be a second, identical evaluation counted as independent.
    if (std::find(out.begin(), out.end(), *n) != out.end())
      throw UserError("fewshot seed " + std::to_string(*n) + " is given twice", where, "distinct seeds");
    out.push_back(*n);
  }
  if (out.empty()) throw UserError("no fewshot seeds given", where, "at least one integer seed");
  return out;
}

namespace {

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

}  // namespace

void apply_config_yaml(const YamlFile& file, EvalConfig& cfg, std::vector<UserError>* collect) {
  if (!file.value.is_object())
    throw UserError("YAML root must be a mapping", {file.path.string(), 1, 1, ""},
                    "a mapping of EvaluatorConfig keys");
  const auto& keys = eval_config_keys();
  for (auto it = file.value.begin(); it != file.value.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    auto where = file.where("/" + key, key);
    try {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        std::string hint = did_you_mean(key, keys);
        throw UserError("unknown key '" + key + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                        where, "one of the EvaluatorConfig fields (see `lm-eval run --help`)");
      }
      if (key == "config") cfg.config = opt_string(v, where, key);
      else if (key == "model") cfg.model = opt_string(v, where, key).value_or("hf");
      else if (key == "model_args") cfg.model_args = dict_field(v, where, key);
      else if (key == "tasks") {
        cfg.tasks.clear();
        auto add = [&](const std::string& s) {
          std::stringstream ss(s);
          std::string item;
          while (std::getline(ss, item, ',')) cfg.tasks.push_back(item);
        };
        if (v.is_string()) add(v.get<std::string>());
        else if (v.is_array()) {
          for (const auto& t : v) {
            if (!t.is_string()) throw UserError("task names must be strings", where, "a list of strings");
            add(t.get<std::string>());
          }
        } else throw UserError("'tasks' has the wrong type", where, "a comma-separated string or a list");
      } else if (key == "num_fewshot") {
        if (v.is_null()) cfg.num_fewshot.reset();
        else if (v.is_number_integer()) cfg.num_fewshot = v.get<int>();
        else throw UserError("'num_fewshot' must be an integer", where, "an integer");
      } else if (key == "batch_size") {
        if (v.is_number_integer() || v.is_string()) cfg.batch_size = v;
        else throw UserError("'batch_size' has the wrong type", where, "an integer, auto or auto:N");
      } else if (key == "max_batch_size") {
        if (v.is_null()) cfg.max_batch_size.reset();
        else if (v.is_number_integer()) cfg.max_batch_size = v.get<int>();
        else throw UserError("'max_batch_size' must be an integer", where, "an integer");
      } else if (key == "device") {
        cfg.device = opt_string(v, where, key).value_or("cuda:0");
        cfg.device_given = !v.is_null();
      } else if (key == "limit") {
        if (v.is_null()) cfg.limit.reset();
        else if (v.is_number()) cfg.limit = v.get<double>();
        else throw UserError("'limit' must be a number", where, "a number (< 1: a fraction)");
      } else if (key == "samples") {
        if (v.is_null()) cfg.samples = nullptr;
        else if (v.is_object()) cfg.samples = v;
        else if (v.is_string()) cfg.samples = v;  // JSON text or a file path, resolved in finalize
        else throw UserError("'samples' has the wrong type", where, "a mapping {task: [indices]}");
      } else if (key == "use_cache") cfg.use_cache = opt_string(v, where, key);
      else if (key == "cache_requests") {
        if (v.is_null() || v.is_object()) cfg.cache_requests = v.is_null() ? Json::object() : v;
        else throw UserError("'cache_requests' has the wrong type", where, "a mapping");
      } else if (key == "check_integrity") cfg.check_integrity = truthy_bool(v, where, key);
      else if (key == "write_out") cfg.write_out = truthy_bool(v, where, key);
      else if (key == "log_samples") cfg.log_samples = truthy_bool(v, where, key);
      else if (key == "output_path") cfg.output_path = opt_string(v, where, key);
      else if (key == "predict_only") cfg.predict_only = truthy_bool(v, where, key);
      else if (key == "system_instruction") cfg.system_instruction = opt_string(v, where, key);
      else if (key == "apply_chat_template") {
        if (v.is_boolean() || v.is_string()) cfg.apply_chat_template = v;
        else if (v.is_null()) cfg.apply_chat_template = false;
        else throw UserError("'apply_chat_template' has the wrong type", where, "true/false or a template name");
      } else if (key == "fewshot_as_multiturn") {
        if (v.is_null()) cfg.fewshot_as_multiturn.reset();
        else cfg.fewshot_as_multiturn = truthy_bool(v, where, key);
      } else if (key == "show_config") cfg.show_config = truthy_bool(v, where, key);
      else if (key == "include_path") cfg.include_path = opt_string(v, where, key);
      else if (key == "gen_kwargs") cfg.gen_kwargs = dict_field(v, where, key);
      else if (key == "verbosity") cfg.verbosity = opt_string(v, where, key);
      else if (key == "seed") cfg.seed = normalize_seed(v, where);
      else if (key == "trust_remote_code") {
        if (truthy_bool(v, where, key))
          throw UserError("trust_remote_code is not supported: lm-eval runs no Python code", where,
                          "remove the key; models and tasks are built in");
      } else if (key == "confirm_run_unsafe_code") cfg.confirm_run_unsafe_code = truthy_bool(v, where, key);
      else if (key == "metadata") cfg.metadata = dict_field(v, where, key);
      else if (key == "bootstrap_iters") {
        if (!v.is_number_integer()) throw UserError("'bootstrap_iters' must be an integer", where, "an integer");
        cfg.bootstrap_iters = v.get<int64_t>();
      } else if (key == "data_dir") cfg.data_dir = opt_string(v, where, key);
      else if (key == "show_ci") cfg.show_ci = truthy_bool(v, where, key);
      else if (key == "continuous_metrics") cfg.continuous_metrics = truthy_bool(v, where, key);
      else if (key == "fewshot_seeds") {
        if (v.is_null()) cfg.fewshot_seeds.clear();
        else cfg.fewshot_seeds = parse_fewshot_seeds(v, where);
      }
      else if (key == "wandb_args" || key == "wandb_config_args" || key == "trackio_args" ||
               key == "hf_hub_log_args") {
        if (!(v.is_null() || (v.is_object() && v.empty()) || (v.is_string() && v.get<std::string>().empty())))
          throw UserError("'" + key + "' is not supported by lm-eval (Python-only logging integration)",
                          where, "remove the key; write results with output_path instead");
      }
    } catch (UserError& e) {
      if (!collect) throw;
      collect->push_back(e);
    }
  }
}

void EvalConfig::finalize() {
  check_setting_ranges(*this);
  if (predict_only) log_samples = true;
  if ((log_samples || predict_only) && !output_path)
    throw UserError("Specify --output_path if providing --log_samples or --predict_only",
                    {"", 0, 0, "--output_path"}, "an output directory or .json path");
  bool chat = apply_chat_template.is_string() ||
              (apply_chat_template.is_boolean() && apply_chat_template.get<bool>());
  if (!fewshot_as_multiturn && chat) fewshot_as_multiturn = true;
  if (fewshot_as_multiturn && *fewshot_as_multiturn && !chat)
    throw UserError("When `fewshot_as_multiturn` is True, `apply_chat_template` must be set.",
                    {"", 0, 0, "--fewshot_as_multiturn"}, "--apply_chat_template as well");
  if (samples.is_string()) {
    std::string s = samples.get<std::string>();
    require_json_nesting(s, SourceLocation{"", 0, 0, "--samples"});
    try {
      samples = Json::parse(s);
    } catch (...) {
      if (std::filesystem::exists(s)) {
        std::ifstream in(s);
        std::stringstream ss;
        ss << in.rdbuf();
        require_json_nesting(ss.str(), s);
        try {
          samples = Json::parse(ss.str());
        } catch (const std::exception& e) {
          throw UserError(std::string("invalid JSON: ") + e.what(), {s, 0, 0, "--samples"},
                          "a JSON object {task: [doc indices]}");
        }
      } else {
        throw UserError("'" + s + "' is neither JSON nor an existing file", {"", 0, 0, "--samples"},
                        "a JSON object {task: [doc indices]} or a path to one");
      }
    }
  }
  bool samples_truthy = !samples.is_null() && !(samples.is_object() && samples.empty());
  if (samples_truthy && limit)
    throw UserError("If --samples is not None, then --limit must be None.", {"", 0, 0, "--samples"},
                    "either --samples or --limit");
  if (samples_truthy && !samples.is_object())
    throw UserError("--samples must be a JSON object", {"", 0, 0, "--samples"},
                    "{task: [doc indices]}");
  // Credentials leave model_args before anything copies it (metadata, results, console line).
  if (model_args.is_object()) {
    for (const char* k : {"api_key", "auth_token", "header"}) {
      if (!model_args.contains(k)) continue;
      model_secrets[k] = model_args[k];
      model_args.erase(k);
    }
  }
  // The first few-shot seed is the run's own: its results are `results`, as a plain run with it.
  if (!fewshot_seeds.empty()) seed[3] = fewshot_seeds[0];
  // metadata = model_args | metadata (metadata keys win).
  Json merged = model_args.is_object() ? model_args : Json::object();
  for (auto it = metadata.begin(); it != metadata.end(); ++it) merged[it.key()] = it.value();
  metadata = merged;
}

}  // namespace lmeval

// EvalConfig: YAML config application, validation and the reference's normalisation steps.
#include "lmeval/config/eval_config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/config/run_options.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval {

const std::vector<std::string>& eval_config_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& o : run_options())
      if (o.from_yaml) k.push_back(o.key);
    return k;
  }();
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
      // _int_or_none_list_arg_type: item.strip().lower() == "none", else int(item).
      std::string s = v.get<std::string>();
      std::string l(unicode::py_strip(s));
      for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (l == "none") return std::nullopt;
      std::string digits = python_int(s);
      if (!digits.empty()) {
        errno = 0;
        long long n = std::strtoll(digits.c_str(), nullptr, 10);
        if (errno == ERANGE)
          throw UserError("seed " + s + " is out of range", where,
                          "integers from -9223372036854775808 to 9223372036854775807, or None");
        return n;
      }
      throw UserError(s + " is not an integer or None", where, "integers or None");
    }
    throw UserError(v.dump() + " is not an integer or None", where, "integers or None");
  };
  std::vector<std::optional<int64_t>> out;
  for (const auto& v : items) out.push_back(to_seed(v));
  if (out.size() == 1) out = {out[0], out[0], out[0], out[0]};
  if (out.size() == 3) out.emplace_back(1234);
  if (out.size() != 4)
    throw UserError("Argument requires 4 integers or None, separated by ','", where,
                    "1, 3 or 4 values");
  // The second seed goes to numpy.random.seed, which raises ValueError outside 0..2**32-1
  // (simple_evaluate); the others (random.seed, torch.manual_seed, random.Random) take any
  // 64-bit integer.
  if (out[1] && (*out[1] < 0 || *out[1] > 4294967295LL))
    throw UserError(
        "numpy seed " + std::to_string(*out[1]) +
            " is out of range (numpy.random.seed: Seed must be between 0 and 2**32 - 1)",
        where, "the second seed from 0 to 4294967295, or None");
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
    while (std::getline(ss, item, ',')) items.emplace_back(item);
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
      throw UserError("fewshot seed " +
                          (v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump()) +
                          " is not an integer",
                      where, "integers separated by ',' (e.g. 1234,1,2,3,4)");
    // A repeated seed would be a second, identical evaluation counted as independent.
    if (std::find(out.begin(), out.end(), *n) != out.end())
      throw UserError("fewshot seed " + std::to_string(*n) + " is given twice", where,
                      "distinct seeds");
    out.push_back(*n);
  }
  if (out.empty()) throw UserError("no fewshot seeds given", where, "at least one integer seed");
  return out;
}

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
        throw UserError(
            "unknown key '" + key + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
            where, "one of the EvaluatorConfig fields (see `lm-eval run --help`)");
      }
      find_run_option(key)->from_yaml(cfg, v, where);
      cfg.yaml_origin[key] = where;
    } catch (UserError& e) {
      if (!collect) throw;
      collect->push_back(e);
    }
  }
}

void EvalConfig::finalize(std::vector<UserError>* collect) {
  // A problem with a value from the --config file is reported at its line there.
  auto report = [&](UserError e, const std::string& key) {
    auto it = yaml_origin.find(key);
    if (it != yaml_origin.end()) e = UserError(e.message(), it->second, e.expected());
    if (!collect) throw e;
    collect->push_back(std::move(e));
  };
  for (const auto& o : run_options()) {  // the run flag table's range checks
    if (!o.check) continue;
    try {
      o.check(*this);
    } catch (UserError& e) {
      report(e, o.key);
    }
  }
  if (predict_only) log_samples = true;
  if ((log_samples || predict_only) && !output_path)
    report(UserError("Specify --output_path if providing --log_samples or --predict_only",
                     {"", 0, 0, "--output_path"}, "an output directory or .json path"),
           yaml_origin.count("log_samples") ? "log_samples" : "predict_only");
  bool chat = apply_chat_template.is_string() ||
              (apply_chat_template.is_boolean() && apply_chat_template.get<bool>());
  if (!fewshot_as_multiturn && chat) fewshot_as_multiturn = true;
  if (fewshot_as_multiturn && *fewshot_as_multiturn && !chat)
    report(UserError("When `fewshot_as_multiturn` is True, `apply_chat_template` must be set.",
                     {"", 0, 0, "--fewshot_as_multiturn"}, "--apply_chat_template as well"),
           "fewshot_as_multiturn");
  if (samples.is_string()) {
    std::string s = samples.get<std::string>();
    try {
      require_json_nesting(s, SourceLocation{"", 0, 0, "--samples"});
      try {
        samples = Json::parse(s);
      } catch (const Json::exception&) {
        if (!std::filesystem::exists(s))
          throw UserError("'" + s + "' is neither JSON nor an existing file",
                          {"", 0, 0, "--samples"},
                          "a JSON object {task: [doc indices]} or a path to one");
        const std::string text =
            read_input_file(s, "--samples file", "a JSON object {task: [doc indices]}");
        require_json_nesting(text, s);
        try {
          samples = Json::parse(text);
        } catch (const std::exception& e) {
          throw UserError(std::string("invalid JSON: ") + e.what(), {s, 0, 0, "--samples"},
                          "a JSON object {task: [doc indices]}");
        }
      }
    } catch (UserError& e) {
      samples = nullptr;  // reported once
      report(e, "samples");
    }
  }
  bool samples_truthy = !samples.is_null() && !(samples.is_object() && samples.empty());
  if (samples_truthy && limit)
    report(UserError("If --samples is not None, then --limit must be None.",
                     {"", 0, 0, "--samples"}, "either --samples or --limit"),
           "samples");
  if (samples_truthy && !samples.is_object())
    report(UserError("--samples must be a JSON object", {"", 0, 0, "--samples"},
                     "{task: [doc indices]}"),
           "samples");
  // Credentials leave model_args before anything copies it (metadata, results, console line).
  if (model_args.is_object()) {
    for (const char* k : {"api_key", "auth_token", "header"}) {
      if (!model_args.contains(k)) continue;
      model_secrets[k] = model_args[k];
      model_args.erase(k);
    }
    // A password in base_url (http://user:PASS@host): the URL stays, masked; the model gets it
    // whole.
    if (model_args.contains("base_url") && model_args["base_url"].is_string()) {
      const std::string url = model_args["base_url"].get<std::string>();
      const std::string masked = mask_url_passwords(url);
      if (masked != url) {
        model_secrets["base_url"] = url;
        model_args["base_url"] = masked;
      }
    }
  }
  // EvaluatorConfig._set_trust_remote_code, after the model_args are parsed.
  if (trust_remote_code) {
    if (!model_args.is_object()) model_args = Json::object();
    model_args["trust_remote_code"] = true;
  }
  // The first few-shot seed is the run's own: its results are `results`, as a plain run with it.
  if (!fewshot_seeds.empty()) seed[3] = fewshot_seeds[0];
  // metadata = model_args | metadata (metadata keys win).
  Json merged = model_args.is_object() ? model_args : Json::object();
  for (auto it = metadata.begin(); it != metadata.end(); ++it) merged[it.key()] = it.value();
  metadata = merged;
}

}  // namespace lmeval

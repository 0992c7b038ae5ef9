// `run` flags and their merge into EvalConfig.
#include "cli/run_options.hpp"

#include <filesystem>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/models/shard.hpp"

namespace lmeval::cli {

static std::vector<std::string>& raw_args_storage() {
  static std::vector<std::string> a;
  return a;
}
const std::vector<std::string>& raw_args() { return raw_args_storage(); }
void set_raw_args(std::vector<std::string> args) { raw_args_storage() = std::move(args); }

void add_run_flags(CLI::App* cmd, RunFlags& f, bool for_validate) {
  auto& o = f.opts;
  o["config"] = cmd->add_option("--config,-C", f.config, "YAML file with run settings (flags override it)");
  o["tasks"] = cmd->add_option("--tasks,-t", f.tasks, "Task, group or tag names, globs, YAML files or a directory (comma separated)")
                   ->expected(1, -1)->delimiter(',')->allow_extra_args();
  o["model"] = cmd->add_option("--model,-M", f.model, "Model backend: hf, dummy, ... (default hf)");
  o["model_args"] = cmd->add_option("--model_args,-a", f.model_args, "Model arguments: k=v,k=v or a JSON object")->expected(1, -1);
  o["include_path"] = cmd->add_option("--include_path", f.include_path, "Extra folder of task YAMLs");
  o["data_dir"] = cmd->add_option("--data_dir", f.data_dir,
                                  "Local datasets as <org>/<name>/<config>/<split>.jsonl (env LMEVAL_DATA_DIR)");
  o["metadata"] = cmd->add_option("--metadata", f.metadata, "JSON object merged into every task's metadata");
  o["output_path"] = cmd->add_option("--output_path,-o", f.output_path, "Directory (or .json file) for results");
  o["gen_kwargs"] = cmd->add_option("--gen_kwargs", f.gen_kwargs, "Generation arguments for generate_until tasks")->expected(1, -1);
  if (for_validate) return;
  o["num_fewshot"] = cmd->add_option("--num_fewshot,-f", f.num_fewshot, "Number of few-shot examples");
  o["batch_size"] = cmd->add_option("--batch_size,-b", f.batch_size, "Batch size: N, auto or auto:N");
  o["max_batch_size"] = cmd->add_option("--max_batch_size", f.max_batch_size, "Upper bound for auto batch size");
  o["device"] = cmd->add_option("--device", f.device, "Device: cpu, cuda, cuda:N (default cuda:0, falls back to cpu)");
  o["limit"] = cmd->add_option("--limit,-L", f.limit, "Documents per task (< 1: a fraction). For testing only");
  o["samples"] = cmd->add_option("--samples,-E", f.samples, "JSON {task: [doc indices]} or a file with it");
  o["use_cache"] = cmd->add_option("--use_cache,-c", f.use_cache, "Response cache path prefix");
  o["cache_requests"] = cmd->add_option("--cache_requests", f.cache_requests, "true | refresh | delete")
                            ->expected(0, 1)->check(CLI::IsMember({"true", "refresh", "delete"}));
  o["check_integrity"] = cmd->add_flag("--check_integrity", f.check_integrity, "(reference only; refused)");
  o["write_out"] = cmd->add_flag("--write_out,-w", f.write_out, "Print the first document's prompt of each task");
  o["log_samples"] = cmd->add_flag("--log_samples,-s", f.log_samples, "Write per-sample JSONL files");
  o["system_instruction"] = cmd->add_option("--system_instruction", f.system_instruction, "System prompt");
  o["apply_chat_template"] = cmd->add_option("--apply_chat_template", f.apply_chat_template,
                                             "Apply the tokenizer's chat template (optionally a named one)")->expected(0, 1);
  o["fewshot_as_multiturn"] = cmd->add_option("--fewshot_as_multiturn", f.fewshot_as_multiturn,
                                              "Few-shot examples as chat turns (true/false)")->expected(0, 1);
  o["show_config"] = cmd->add_flag("--show_config", f.show_config, "Print the full results JSON");
  o["verbosity"] = cmd->add_option("--verbosity,-v", f.verbosity, "Log level (DEBUG, INFO, WARNING, ERROR)");
  o["predict_only"] = cmd->add_flag("--predict_only,-x", f.predict_only, "Only save model outputs (implies --log_samples)");
  o["seed"] = cmd->add_option("--seed", f.seed, "Seeds: python,numpy,torch,fewshot (default 0,1234,1234,1234)");
  o["fewshot_seeds"] = cmd->add_option("--fewshot_seeds", f.fewshot_seeds,
                                       "Evaluate once per few-shot sampler seed, e.g. 1234,1,2,3,4; reports "
                                       "mean, std, min, max across seeds (first seed = results)");
  o["trust_remote_code"] = cmd->add_flag("--trust_remote_code", f.trust_remote_code, "(Python only; refused)");
  o["confirm_run_unsafe_code"] = cmd->add_flag("--confirm_run_unsafe_code", f.confirm_run_unsafe_code,
                                               "Allow tasks marked unsafe_code");
  o["bootstrap_iters"] = cmd->add_option("--bootstrap_iters", f.bootstrap_iters, "Bootstrap iterations for stderr (default 100000)");
  o["show_ci"] = cmd->add_flag("--show_ci", f.show_ci, "Show confidence intervals in the table");
  o["continuous_metrics"] = cmd->add_flag("--continuous_metrics", f.continuous_metrics,
                                          "Add p_correct and logprob_gold_margin to every multiple_choice task");
  o["show_normalized"] = cmd->add_flag("--show_normalized", f.show_normalized,
                                       "Accepted for compatibility: normalised scores are shown whenever a task has a random baseline");
  o["shard"] = cmd->add_option("--shard", f.shard,
                               "I/N: answer the I-th of N parts of the requests and write a partial file "
                               "for `lm-eval merge`");
  for (const char* name : {"--wandb_args", "--wandb_config_args", "--trackio_args", "--hf_hub_log_args"})
    o[name + 2] = cmd->add_option(name, f.unsupported, "(Python-only integration; refused)")->expected(0, -1);
}

void collect_dict_occurrences(const std::vector<std::string>& args, RunFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], inline_value;
    bool has_inline = false;
    auto eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline = true;
    }
    std::string key;
    if (flag == "--model_args" || flag == "-a") key = "model_args";
    else if (flag == "--gen_kwargs") key = "gen_kwargs";
    else continue;
    std::vector<std::string> values;
    if (has_inline) values.push_back(inline_value);
    size_t j = i + 1;
    for (; !has_inline && j < args.size(); ++j) {
      const std::string& v = args[j];
      if (v.size() > 1 && v[0] == '-' && !std::isdigit(static_cast<unsigned char>(v[1])) && v[1] != '.') break;
      values.push_back(v);
    }
    f.dict_occurrences[key].push_back(values);
    if (!has_inline) i = j - 1;
  }
}

static bool given(const RunFlags& f, const std::string& name) {
  auto it = f.opts.find(name);
  return it != f.opts.end() && it->second->count() > 0;
}

static bool parse_bool_text(const std::string& s) {
  std::string l = s;
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == "true" || l == "1" || l == "yes";
}

EvalConfig build_eval_config(const RunFlags& f, std::vector<UserError>* collect) {
  EvalConfig cfg;
  if (given(f, "config")) {
    if (!std::filesystem::exists(f.config))
      throw UserError("Config file not found: " + std::filesystem::absolute(f.config).string(),
                      {f.config, 0, 0, "--config"}, "an existing YAML file");
    YamlFile y = load_yaml(f.config);
    apply_config_yaml(y, cfg, collect);
    cfg.config = f.config;
  }
  for (const auto& name : {"wandb_args", "wandb_config_args", "trackio_args", "hf_hub_log_args"})
    if (given(f, name))
      throw UserError(std::string("--") + name + " is a Python-only logging integration and is not supported",
                      {"", 0, 0, std::string("--") + name}, "results written with --output_path");
  if (given(f, "trust_remote_code"))
    throw UserError("--trust_remote_code is not supported: lm-eval runs no Python code from models or datasets",
                    {"", 0, 0, "--trust_remote_code"}, "built-in tasks and safetensors models");
  if (given(f, "check_integrity"))
    throw UserError("--check_integrity runs the reference's Python test suite and is not supported",
                    {"", 0, 0, "--check_integrity"}, "`lm-eval validate` to check task configs");
  if (given(f, "tasks")) {
    cfg.tasks.clear();
    for (const auto& t : f.tasks) cfg.tasks.push_back(t);
  }
  if (given(f, "model")) cfg.model = f.model;
  if (given(f, "model_args") && f.dict_occurrences.count("model_args"))
    cfg.model_args = merge_dict_flag(f.dict_occurrences.at("model_args"), "--model_args");
  if (given(f, "gen_kwargs") && f.dict_occurrences.count("gen_kwargs"))
    cfg.gen_kwargs = merge_dict_flag(f.dict_occurrences.at("gen_kwargs"), "--gen_kwargs");
  if (given(f, "include_path")) cfg.include_path = f.include_path;
  if (given(f, "data_dir")) cfg.data_dir = f.data_dir;
  if (given(f, "metadata")) {
    require_json_nesting(f.metadata, SourceLocation{"", 0, 0, "--metadata"});
    try {
      Json m = Json::parse(f.metadata);
      if (!m.is_object()) throw std::runtime_error("not an object");
      cfg.metadata = m;
    } catch (const std::exception&) {
      throw UserError("argument --metadata: invalid loads value: '" + f.metadata + "'",
                      {"", 0, 0, "--metadata"}, "a JSON object, e.g. '{\"max_seq_lengths\":[4096]}'");
    }
  }
  if (given(f, "output_path")) cfg.output_path = f.output_path;
  if (given(f, "num_fewshot")) cfg.num_fewshot = f.num_fewshot;
  if (given(f, "batch_size")) cfg.batch_size = f.batch_size;
  if (given(f, "max_batch_size")) cfg.max_batch_size = f.max_batch_size;
  if (given(f, "device")) {
    cfg.device = f.device;
    cfg.device_given = true;
  }
  if (given(f, "limit")) cfg.limit = f.limit;
  if (given(f, "samples")) cfg.samples = f.samples;
  if (given(f, "use_cache")) cfg.use_cache = f.use_cache;
  if (given(f, "cache_requests")) {
    std::string v = f.cache_requests.empty() ? "true" : f.cache_requests;
    cfg.cache_requests = Json::object();
    if (v == "true") cfg.cache_requests["cache_requests"] = true;
    if (v == "refresh") cfg.cache_requests = {{"cache_requests", true}, {"rewrite_requests_cache", true}};
    if (v == "delete") cfg.cache_requests = {{"delete_requests_cache", true}};
  }
  if (given(f, "write_out")) cfg.write_out = true;
  if (given(f, "log_samples")) cfg.log_samples = true;
  if (given(f, "system_instruction")) cfg.system_instruction = f.system_instruction;
  if (given(f, "apply_chat_template"))
    cfg.apply_chat_template = f.apply_chat_template.empty() ? Json(true) : Json(f.apply_chat_template);
  if (given(f, "fewshot_as_multiturn"))
    cfg.fewshot_as_multiturn = f.fewshot_as_multiturn.empty() ? true : parse_bool_text(f.fewshot_as_multiturn);
  if (given(f, "show_config")) cfg.show_config = true;
  if (given(f, "verbosity")) cfg.verbosity = f.verbosity;
  if (given(f, "predict_only")) cfg.predict_only = true;
  if (given(f, "seed")) cfg.seed = parse_seed(f.seed);
  if (given(f, "confirm_run_unsafe_code")) cfg.confirm_run_unsafe_code = true;
  if (given(f, "bootstrap_iters")) cfg.bootstrap_iters = f.bootstrap_iters;
  if (given(f, "show_ci")) cfg.show_ci = true;
  if (given(f, "continuous_metrics")) cfg.continuous_metrics = true;
  if (given(f, "shard")) {
    ShardSpec s = parse_shard_spec(f.shard);
    cfg.shard_index = s.index;
    cfg.shard_count = s.count;
  }
  if (given(f, "fewshot_seeds"))
    cfg.fewshot_seeds = parse_fewshot_seeds(Json(f.fewshot_seeds), {"", 0, 0, "--fewshot_seeds"});
  return cfg;
}

}  // namespace lmeval::cli

// EvalConfig: everything a run needs, merged from built-in defaults < --config YAML < flags.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/did_you_mean.hpp"

namespace lmeval {

struct EvalConfig {
  std::optional<std::string> config;  // the --config file
  std::vector<std::string> tasks;
  std::string model = "hf";
  Json model_args = Json::object();
  // Credentials given in model_args (api_key, auth_token, header), moved here by finalize() so
  // that results, logs and task metadata never hold them; only the model factory sees them.
  Json model_secrets = Json::object();
  Json apply_chat_template = false;  // false, true, or a template name (string)
  std::optional<double> limit;
  std::optional<std::string> use_cache;
  std::optional<int> num_fewshot;
  Json batch_size = 1;  // int 1 by default; the string given otherwise
  std::optional<int> max_batch_size;
  std::string device = "cuda:0";
  // Whether --device (or the config's device) was given: only then is it passed to the model, so
  // an hf run insists on it (--device cuda needs the CUDA backend) rather than falling back.
  bool device_given = false;
  Json gen_kwargs = Json::object();
  std::optional<std::string> output_path;
  bool log_samples = false;
  // lm-eval's own `repeat_scores` key in sample records of `repeats` tasks (the reference writes
  // none; analyze/report read it).
  bool log_repeat_scores = false;
  Json samples = nullptr;  // {task: [indices]}
  Json cache_requests = Json::object();
  bool check_integrity = false;
  std::optional<std::string> system_instruction;
  std::optional<bool> fewshot_as_multiturn;
  std::optional<std::string> include_path;
  std::optional<std::string> verbosity;
  bool write_out = false;
  bool show_config = false;
  bool predict_only = false;
  std::vector<std::optional<int64_t>> seed = {0, 1234, 1234, 1234};
  bool trust_remote_code = false;
  bool confirm_run_unsafe_code = false;
  Json metadata = Json::object();
  int64_t bootstrap_iters = 100000;
  // The logging integrations' dicts (EvaluationTracker / WandbLogger keyword arguments).
  Json hf_hub_log_args = Json::object();
  Json wandb_args = Json::object();
  Json wandb_config_args = Json::object();
  // lm-eval's own additions
  std::optional<std::string> data_dir;  // local `<org>/<name>/<config>/<split>.jsonl` tree
  bool show_ci = false;
  // p_correct and logprob_gold_margin for every multiple_choice task (docs/statistics.md).
  bool continuous_metrics = false;
  // --shard I/N: this run answers the I-th of N parts of the requests (I from 1) and writes a
  // partial file for `lm-eval merge`; 0/0 is a whole run.
  int shard_index = 0;
  int shard_count = 0;
  // --fewshot_seeds: one evaluation per few-shot sampler seed (empty: a plain run). The first
  // seed's results are the run's `results`; finalize() makes it the fourth --seed value.
  std::vector<int64_t> fewshot_seeds;

  // Where each key set by the --config file was written (a flag given for the key removes it),
  // so that a problem found later with its value names that file and line.
  std::map<std::string, SourceLocation> yaml_origin;

  // The reference's EvaluatorConfig._configure steps that do not need tasks: predict_only ->
  // log_samples, output_path requirement, fewshot_as_multiturn default and check, samples vs
  // limit, samples parsing, credentials out of model_args, metadata = model_args | metadata;
  // and the run flag table's range checks. Throws UserError, or with `collect` adds each
  // problem there and goes on (validate).
  void finalize(std::vector<UserError>* collect = nullptr);
};

// Known keys of an eval.yaml (the EvaluatorConfig field names plus lm-eval's own).
const std::vector<std::string>& eval_config_keys();

// Applies the keys of a --config YAML mapping onto cfg. Unknown keys and wrong types throw
// UserError with file:line and a did-you-mean. With `collect`, problems are appended instead.
void apply_config_yaml(const YamlFile& file, EvalConfig& cfg,
                       std::vector<UserError>* collect = nullptr);

// --seed parsing (_int_or_none_list_arg_type with min 3, max 4, defaults 0,1234,1234,1234).
std::vector<std::optional<int64_t>> parse_seed(const std::string& value);
std::vector<std::optional<int64_t>> normalize_seed(const Json& value, const SourceLocation& where);

// Every field as JSON and back (a shard's partial file carries its run's config to merge).
// Fields absent from `j` keep their defaults.
Json eval_config_to_json(const EvalConfig& cfg);
EvalConfig eval_config_from_json(const Json& j);
// --fewshot_seeds / `fewshot_seeds:`: a comma-separated string or a list of distinct integers.
std::vector<int64_t> parse_fewshot_seeds(const Json& value, const SourceLocation& where);

}  // namespace lmeval

// The flags of `lm-eval run` (shared with `validate`): registration on a CLI11 command and the
// merge defaults < --config YAML < flags into an EvalConfig (spec §2.1–§2.3).
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"

namespace lmeval::cli {

struct RunFlags {
  std::string config, model, apply_chat_template, use_cache, batch_size, device, output_path,
      samples, cache_requests, system_instruction, fewshot_as_multiturn, include_path, verbosity,
      seed, metadata, data_dir, shard, fewshot_seeds;
  std::vector<std::string> tasks, model_args, gen_kwargs, unsupported;
  double limit = 0;
  int num_fewshot = 0, max_batch_size = 0;
  int64_t bootstrap_iters = 100000;
  bool log_samples = false, check_integrity = false, write_out = false, show_config = false,
       predict_only = false, trust_remote_code = false, confirm_run_unsafe_code = false,
       show_ci = false, show_normalized = false, continuous_metrics = false;
  std::map<std::string, CLI::Option*> opts;
  // Each occurrence of a dict flag with its values, collected from argv (argparse's
  // MergeDictAction is per occurrence).
  std::map<std::string, std::vector<std::vector<std::string>>> dict_occurrences;
};

// Adds the run flags to `cmd`. `for_validate` keeps only what validate accepts.
void add_run_flags(CLI::App* cmd, RunFlags& f, bool for_validate = false);

// Scans raw argv for --model_args/-a and --gen_kwargs occurrences.
void collect_dict_occurrences(const std::vector<std::string>& args, RunFlags& f);

// Builds the EvalConfig; with `collect`, config-file problems are appended instead of thrown.
EvalConfig build_eval_config(const RunFlags& f, std::vector<UserError>* collect = nullptr);

// Raw argv of this process (set by main) for the dict-flag scan.
const std::vector<std::string>& raw_args();
void set_raw_args(std::vector<std::string> args);

}  // namespace lmeval::cli

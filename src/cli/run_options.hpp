// The flags of `lm-eval run` (shared with `validate`), registered on a CLI11 command from the run
// flag table (config/run_options.hpp), and the merge defaults < --config YAML < flags into an
// EvalConfig (spec §2.1–§2.3).
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/run_options.hpp"

namespace lmeval::cli {

struct RunFlags {
  // What the parser read for each flag, by table key; `opts` says which were given.
  std::map<std::string, CliValue> values;
  std::map<std::string, bool> switches;
  std::map<std::string, CLI::Option*> opts;
  // Each occurrence of a dict flag with its values, collected from argv (argparse's
  // MergeDictAction is per occurrence).
  std::map<std::string, std::vector<std::vector<std::string>>> dict_occurrences;
};

// Adds the run flags to `cmd`. `for_validate` keeps only what validate accepts.
void add_run_flags(CLI::App* cmd, RunFlags& f, bool for_validate = false);

// Scans raw argv for the occurrences of the dict flags (--model_args/-a, --gen_kwargs).
void collect_dict_occurrences(const std::vector<std::string>& args, RunFlags& f);

// Builds the EvalConfig; with `collect`, config-file problems are appended instead of thrown.
EvalConfig build_eval_config(const RunFlags& f, std::vector<UserError>* collect = nullptr);

// Raw argv of this process (set by main) for the dict-flag scan.
const std::vector<std::string>& raw_args();
void set_raw_args(std::vector<std::string> args);

}  // namespace lmeval::cli

// The run flags, declared once: each entry names a flag and its YAML key, says what it takes and
// how it sets EvalConfig. CLI parsing (cli/run_options.cpp), --config YAML (apply_config_yaml),
// the shard file's config (eval_config_to_json), the results' `config` block and docs/cli.md's
// flag list all read this table (tests/config/run_options_test.cpp checks the docs against it).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"

namespace lmeval {

// How a flag reads its values on the command line.
enum class OptionKind {
  Flag,          // --x (no value)
  Text,          // --x VALUE
  OptionalText,  // --x [VALUE]
  Texts,         // --x VALUE... (one or more; each occurrence a list)
  CommaTexts,    // --x A,B C (comma separated and/or several values)
  AnyTexts,      // --x [VALUE...] (refused integrations: accepted by the parser, refused after)
  Int,           // --x N (int)
  Int64,         // --x N (64-bit)
  Number,        // --x X (double)
};

// What the command line gave for one flag (the member matching the flag's kind is filled).
struct CliValue {
  std::string text;
  std::vector<std::string> texts;
  int integer = 0;
  int64_t integer64 = 0;
  double number = 0;
  // Every occurrence of a dict flag with its values, read from argv (argparse's MergeDictAction
  // is per occurrence); empty for other flags.
  std::vector<std::vector<std::string>> occurrences;
};

struct RunOption {
  // The EvalConfig field, YAML key and shard-file key (one name for all three).
  std::string key;
  // Command-line spellings, long first ("--tasks", "-t"); empty for a key that is no flag.
  std::vector<std::string> flags;
  std::string help;
  OptionKind kind = OptionKind::Text;
  // Accepted values on the command line (checked by the parser); empty: any.
  std::vector<std::string> choices;
  // Kept by `validate` (which needs no model settings).
  bool for_validate = false;
  // Accepted by the parser, then refused with a message (Python-only features). Refusals are
  // checked before any other flag is applied.
  bool refused = false;
  // Applies the command-line value; set only when the flag was given.
  std::function<void(EvalConfig&, const CliValue&)> from_cli;
  // Applies a --config YAML value; unset: not a YAML key.
  std::function<void(EvalConfig&, const Json&, const SourceLocation&)> from_yaml;
  // The field in a shard file's config (to and from JSON); unset: not recorded there.
  std::function<void(const EvalConfig&, Json&)> to_json;
  std::function<void(EvalConfig&, const Json&)> from_json;
  // The range check of the field's value, run by EvalConfig::finalize on flags and --config
  // values alike (UserError naming the flag and the accepted range); unset: any value.
  std::function<void(const EvalConfig&)> check;
  // Position of this field in the results' `config` block (the reference's order); 0: absent.
  int results_rank = 0;
  std::function<void(const EvalConfig&, Json&)> to_results;
};

// Every run flag and --config key, in `lm-eval run --help` order.
const std::vector<RunOption>& run_options();
// The entry with this key, or nullptr.
const RunOption* find_run_option(const std::string& key);

// The results' `config` block (evaluator.simple_evaluate's): the fields of the table with a
// results rank, in rank order, with `model_info` spliced in after model_args and `batch_sizes`
// after batch_size, as the reference writes them.
Json results_config(const EvalConfig& cfg, const Json& model_info, const Json& batch_sizes);

// One Markdown table row per flag (`| flags | takes | default | help |`), the list docs/cli.md
// carries between its `run-flags` markers.
std::vector<std::string> run_option_doc_rows();

}  // namespace lmeval

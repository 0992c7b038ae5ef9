// The orchestration of a run (the reference's simple_evaluate + evaluate): the only module that
// sees tasks and models together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/data/data_source.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tasks/task_index.hpp"

namespace lmeval {

// Per-task logged samples (one JSON object per line of samples_<task>_<date>.jsonl).
struct TaskSamples {
  std::string task;
  std::vector<Json> lines;
};

struct EvalOutput {
  Json results;                        // the results file content (reference layout, key order)
  std::vector<TaskSamples> samples;    // when log_samples, tasks in `configs` (sorted) order
  std::vector<std::string> write_out;  // --write_out text per task
  Json partial;                        // --shard runs: the partial file for `lm-eval merge`
};

// Registers built-in models, filters and task functions (idempotent).
void register_builtins();

// The task roots of a run: built-in tasks dir, then --include_path (later roots override).
std::vector<std::filesystem::path> task_roots(const EvalConfig& cfg);

// The task index for the names a command asks for: built-ins and --include_path; when one of
// `wanted` (names or globs; YAML paths are skipped) is not there, or `always_reference` (`ls`),
// the reference's library of the active Python environment (reference_library.hpp) too, as the
// first root, so that built-ins and --include_path keep overriding it.
TaskIndex task_index_for(const EvalConfig& cfg, const std::vector<std::string>& wanted,
                         bool always_reference = false);

// Local data (--data_dir / $LMEVAL_DATA_DIR), then the Hub when available.
std::shared_ptr<DataSource> make_data_source(const EvalConfig& cfg);

// Runs an evaluation. Throws UserError for configuration/data problems, RuntimeError otherwise.
// `model` may be supplied by the caller (tests); otherwise it is built from cfg.model.
EvalOutput evaluate(const EvalConfig& cfg, std::unique_ptr<LM> model = nullptr);

// cfg.model built as evaluate() builds it (model_args checked first), for runs that share it.
std::unique_ptr<LM> build_model(const EvalConfig& cfg);

// evaluate() on `model`, built from cfg by build_model and kept by the caller for further runs
// (several adapters over one base: LM::prepare_adapters), behind cfg's --use_cache wrapper as a
// model evaluate() builds would be.
EvalOutput evaluate_on(const EvalConfig& cfg, LM& model);

}  // namespace lmeval

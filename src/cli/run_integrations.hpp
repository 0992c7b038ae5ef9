// The run's logging integrations (--hf_hub_log_args, --wandb_args): checked before the model
// phase, fed the finished run after its files are written.
#pragma once

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

// Before any model or data, as the reference's WandbLogger and EvaluationTracker constructors
// fail early: wandb importable (exit 2 otherwise), a token for a push (exit 2), the token's user
// for an unnamed org (HfApi.whoami; stored into cfg.hf_hub_log_args).
void prepare_integrations(EvalConfig& cfg);

// W&B logging, then the Hub push and dataset card, as the reference's cli_evaluate orders them.
// `written` is null when the run wrote no files (no --output_path). Failures are warnings: the
// reference logs them and exits 0.
void log_to_integrations(const EvalConfig& cfg, const EvalOutput& out, const WrittenFiles* written);

}  // namespace lmeval::cli

// `--wandb_args` / `--wandb_config_args`: a finished run logged to Weights & Biases through the
// `wandb` package of the active Python environment, as the reference's WandbLogger logs it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

// Before any model or data: a UserError (exit 2) saying how to install wandb when the active
// Python environment (core/python_env.hpp) cannot import it.
void check_wandb_available();

struct WandbOutcome {
  bool ok = false;
  std::string message;  // the run's URL when known, else why logging failed
  std::string output;   // what wandb printed (its own progress lines)
};

// Runs src/output/wandb_logger.py in the active environment's interpreter (a child process: the
// wandb service and its threads stay out of lm-eval) with `results` (the results file's content)
// and, when given, the samples per task. Never throws for a failure of wandb itself: the
// reference logs "Logging to W&B failed" and goes on.
WandbOutcome log_to_wandb(const Json& wandb_args, const Json& wandb_config_args,
                          const Json& results,
                          const std::vector<std::pair<std::string, std::vector<Json>>>* samples);

}  // namespace lmeval

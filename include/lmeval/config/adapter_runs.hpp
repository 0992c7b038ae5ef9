// Several LoRA adapters over one base in one command: `peft=a,b`, `peft=[a,b]` or a YAML list
// under model_args.peft in --config. Each adapter is a run of its own (its own results file,
// model_args naming its adapter), in the order given.
#pragma once

#include <vector>

#include "lmeval/config/eval_config.hpp"

namespace lmeval {

// The runs `cfg` stands for: itself when model_args.peft names at most one adapter, else one
// copy per adapter with model_args.peft set to it. An empty or non-text entry is exit 2 naming
// --model_args peft.
std::vector<EvalConfig> adapter_runs(const EvalConfig& cfg);

}  // namespace lmeval

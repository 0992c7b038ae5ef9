// What `run` and `merge` do with a finished evaluation: files under --output_path, the summary
// line and the tables; and a shard run's partial file.
#pragma once

#include <filesystem>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/evaluator.hpp"

namespace lmeval::cli {

// Returns the exit code (0).
int report_run(const EvalConfig& cfg, const EvalOutput& out);

// <output_path>/shard_<I>of<N>.json (or <stem>_shard_<I>of<N>.json beside a .json output_path).
std::filesystem::path write_partial(const EvalConfig& cfg, const Json& partial);

}  // namespace lmeval::cli

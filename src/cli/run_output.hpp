// What `run` and `merge` do with a finished evaluation: files under --output_path, the summary
// line and the tables; and a shard run's partial file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/evaluator.hpp"

namespace lmeval::cli {

// Returns the exit code (0).
int report_run(const EvalConfig& cfg, const EvalOutput& out);

// <output_path>/shard_<I>of<N>.json (or <stem>_shard_<I>of<N>.json beside a .json output_path).
std::filesystem::path write_partial(const EvalConfig& cfg, const Json& partial);
// Where part `index` (1..N) of cfg's shard run is written.
std::filesystem::path partial_path(const EvalConfig& cfg, int index);

// `lm-eval merge`'s work: the parts' results and samples written under output_path; the exit code.
int merge_parts(const std::vector<std::string>& parts, const std::string& output_path);

}  // namespace lmeval::cli

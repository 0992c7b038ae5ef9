// Range checks of run settings, one per kind of value; each throws UserError naming the flag and
// the accepted range. Applied by EvalConfig::finalize to flags and --config values alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmeval {

struct EvalConfig;

// --limit: a fraction of each task's documents in (0, 1), or a document count from 1 up
// (the reference's get_sample_size: ceil(n * limit) below 1, int(limit) from 1). nan, inf, 0,
// negatives and counts past 2^63 - 1 (where the reference's islice fails) are refused.
void check_limit(double limit);

// An integer setting from lo to hi inclusive (--num_fewshot, --max_batch_size, ...).
void check_int_range(int64_t value, const std::string& flag, int64_t lo, int64_t hi);

// --verbosity: DEBUG, INFO, WARNING, ERROR or CRITICAL in any case (the reference upper-cases
// the value and logging.setLevel refuses any other name). Returns the upper-cased name.
std::string check_verbosity(const std::string& value);

// --include_path as a list of folders: the value itself when that path exists (the reference
// takes the value whole: TaskManager(include_path=str) indexes Path(value)), else its pieces
// between ':' (the list its `ls`/`validate` help shows, which its code never splits: there a
// missing "a:b" indexes nothing, without a word). Empty pieces are dropped.
std::vector<std::string> include_path_list(const std::string& value);

// --include_path: each of include_path_list an existing folder of task YAMLs (or one YAML file).
void check_include_path(const std::string& path);

// The range checks of the run flag table (config/run_options.cpp: limit, num_fewshot,
// max_batch_size, bootstrap_iters, batch_size through check_batch_size, verbosity, include_path).
void check_setting_ranges(const EvalConfig& cfg);

}  // namespace lmeval

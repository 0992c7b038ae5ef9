// Writing results and samples files (spec §9.3) and the console tables (§9.4).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

struct WrittenFiles {
  std::filesystem::path results;
  std::vector<std::filesystem::path> samples;
};

// Writes `content` to `path` whole or not at all (core/atomic_file.hpp: temporary file, fsync,
// rename; creates the folder); a RuntimeError naming the file and the OS error when it fails.
void write_text_file(const std::filesystem::path& path, const std::string& content);

// UserError (field --output_path) unless files can be created where --output_path puts them: the
// path is a file where a folder is expected, lies under a file, or its folder (the closest one
// that exists) refuses a probe file (read-only mount, permissions). Creates nothing that stays.
// A dangling symlink on the way is refused too (the final create_directories would fail on it).
void check_output_path_writable(const std::string& output_path);

// UserError naming `flag` unless `path` (report/compare/analyze/power --output) is a regular file
// or a new one in a folder that can take it: a folder, symlink, FIFO or device is refused before
// any work (the atomic write would replace it).
void check_output_file(const std::string& path, const std::string& flag);

// date_id = local time isoformat with ':' replaced by '-'.
std::string date_id_now();

// Writes <output_path>/<model_sanitized>/results_<date>.json (or <stem>_<date>.json when
// output_path ends in .json) and, for each task, samples_<task>_<date>.jsonl: all staged, then the
// samples renamed into place and the results last. A write failure is a RuntimeError naming the
// file and leaves none of them; a stop signal before the renames throws Interrupted, likewise.
WrittenFiles write_outputs(const std::string& output_path, const Json& results,
                           const std::vector<std::pair<std::string, std::vector<Json>>>& samples);

// make_table(results, column) rendered as pytablewriter's Markdown.
// column: "results" or "groups". lm-eval's own extensions: where a task of the table has a
// leaderboard-normalised score (the results' `leaderboard_normalized`), the value column is headed
// "Value (raw)" and a "Normalised (leaderboard)" column follows the stderr; with `show_ci`, the 95%
// interval, clustered stderr and minimum detectable difference from the results' `statistics`
// section (docs/statistics.md).
std::string make_table(const Json& results, const std::string& column = "results",
                       bool show_ci = false);

// The line printed under the tables when they show normalised scores (what each column is);
// empty otherwise.
std::string normalized_scores_note(const Json& results);

// The notes printed under the tables with --show_ci: what MDE80 means, and which tasks have
// fewer than 100 items (exact or bootstrap intervals). Empty without a `statistics` section.
std::string statistics_notes(const Json& results);

// Per task and group, each score's mean ± sample std [min, max] across few-shot seeds, from
// the results' `fewshot_seed_variance` (lm-eval's own table; only with --fewshot_seeds); where a
// task has a random baseline, the mean is headed "Mean (raw)" and its leaderboard-normalised value
// follows.
std::string make_seed_variance_table(const Json& results);

// The pytablewriter Markdown rendering of rows of cells (JSON strings / numbers / null).
std::string markdown_table(const std::vector<std::string>& headers,
                           const std::vector<std::vector<Json>>& rows);

}  // namespace lmeval

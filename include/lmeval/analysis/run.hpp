// A finished run read back from disk: its results file and, per task, the per-item scores of its
// samples files, keyed by document hash so that runs can be paired item by item.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::analysis {

// One document of a task. Several sample lines of one document (one per filter, few-shot seed or
// repeat) make one item; their scores are averaged per metric and filter.
struct Item {
  std::string key;  // doc_hash; "<doc_hash>#k" for the k-th copy of a document the dataset repeats
  std::string doc_hash;
  std::string prompt_hash;  // of the first line seen (few-shot seed runs have one prompt per seed)
  std::vector<std::string> prompt_hashes;  // every distinct prompt hash, sorted
  long long doc_id = 0;
  Json doc;
  Json target;
  std::string cluster;  // the document's value of the task's cluster_key; empty without one
  // What the report's sample browser shows, from the document's first line: the request
  // arguments ({"gen_args_i": {"arg_j": ..}}), the model's responses, and per filter the filtered
  // responses.
  Json arguments;
  Json resps;
  Json filtered = Json::object();
};

struct TaskSamples {
  std::filesystem::path file;
  std::string cluster_key;                   // empty when the task has none
  std::vector<Item> items;                   // in doc_id order
  std::map<std::string, std::size_t> index;  // item key -> position in items
  // "<metric>,<filter>" -> per-item score aligned with items (NaN where an item lacks the metric).
  std::map<std::string, std::vector<double>> scores;
  std::vector<std::string> score_keys;  // the keys of `scores` in the order first seen
  // Runs with --fewshot_seeds: the seeds of the samples lines in the order first seen (empty for a
  // plain run, whose lines carry no fewshot_seed), and with two or more seeds, per key, each seed's
  // per-item scores: seed_scores[key][k][i] for seeds[k] and items[i] (NaN where missing).
  // `scores` is then the mean over the seeds.
  std::vector<long long> fewshot_seeds;
  std::map<std::string, std::vector<std::vector<double>>> seed_scores;
  // Tasks with `repeats` > 1 (samples lines with `repeat_scores`): per key, each item's scores on
  // its K sampled answers, each answer scored alone (repeat_scores[key][i], aligned with items;
  // empty where the item has none). From the first few-shot seed's lines only.
  std::map<std::string, std::vector<std::vector<double>>> repeat_scores;
};

struct Run {
  std::string source;  // the path the user gave
  std::string label;   // model name, made unique among the runs compared
  std::filesystem::path results_file;
  Json results;
  std::map<std::string, TaskSamples> samples;  // every task of configs that has a samples file

  // Tasks (not groups) in the results file: the keys of "configs".
  std::vector<std::string> tasks() const;
};

// A score as the run's results file records it in `leaderboard_normalized` (spec §8.2): a task's
// raw score rescaled from its random baseline, or a leaderboard group's score by the leaderboard's
// own rule (BBH, MuSR: the unweighted mean of the normalised subtasks; no single baseline).
struct NormalizedScore {
  double raw = 0, normalized = 0;
  std::optional<double> random_baseline;  // unset for a rule
  std::string rule;                       // empty for a baseline
};
// For "<metric>,<filter>" of `task` (or group); nullopt when the run records neither.
std::optional<NormalizedScore> normalized_score(const Run& run, const std::string& task,
                                                const std::string& key);

// Reads an output folder (<output_path> or <output_path>/<model>, newest results file) or a
// results file, and the samples_<task>_<date>.jsonl files written beside it. Bad or missing
// input is a UserError naming the file (and line) and what was expected.
Run load_run(const std::string& path);

// Parses a JSON file; a syntax error is a UserError with the file, line and column.
Json read_json_file(const std::filesystem::path& file);

// Labels runs by model name, suffixed #2, #3... where two runs share one.
void label_runs(std::vector<Run>& runs);

// load_run for each path, then label_runs.
std::vector<Run> load_runs(const std::vector<std::string>& paths);

}  // namespace lmeval::analysis

// `lm-eval merge PARTS... --output_path DIR`: the partial files of a --shard run in, the results
// and samples of the whole run out. The tasks are rebuilt from the recorded config (so the task
// files and datasets must be reachable here too) and scored with the parts' recorded answers.
#include <fstream>

#include "cli/commands.hpp"
#include "cli/run_output.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/models/shard.hpp"

namespace lmeval::cli {

namespace {

struct MergeFlags {
  std::vector<std::string> parts;
  std::string output_path;
  bool show_normalized = false;
};

int merge_main(const MergeFlags& f) {
  std::vector<Json> parts;
  for (const auto& p : f.parts) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw UserError("cannot read part " + p, {p, 0, 0, ""}, "a shard_<I>of<N>.json from lm-eval run --shard");
    try {
      parts.push_back(Json::parse(in));
    } catch (const Json::parse_error& e) {
      throw UserError(std::string("not JSON: ") + e.what(), {p, 0, 0, ""},
                      "a shard_<I>of<N>.json from lm-eval run --shard");
    }
  }
  auto model = make_replay_lm(parts, f.parts);
  // Part 1's config, whatever the order given (the parts may differ in output_path, use_cache).
  const Json* first = &parts[0];
  for (const auto& p : parts)
    if (p.at("shard").at(0) == 1) first = &p;
  EvalConfig cfg = eval_config_from_json(first->at("config"));
  cfg.shard_index = cfg.shard_count = 0;
  cfg.output_path = f.output_path;
  EvalOutput out = evaluate(cfg, std::move(model));
  return report_run(cfg, out);
}

}  // namespace

void add_merge_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("merge", "Combine the partial files of `run --shard I/N` into one run's results");
  auto flags = std::make_shared<MergeFlags>();
  cmd->add_option("parts", flags->parts, "shard_<I>of<N>.json files, one per part (any order)")->required();
  cmd->add_option("--output_path,-o", flags->output_path, "Directory (or .json file) for results and samples")
      ->required();
  cmd->add_flag("--show_normalized", flags->show_normalized, "Accepted for compatibility: normalised scores are shown whenever a task has a random baseline");
  cmd->callback([&action, flags] { action = [flags] { return merge_main(*flags); }; });
}

}  // namespace lmeval::cli

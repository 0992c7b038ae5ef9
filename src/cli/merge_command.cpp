// `lm-eval merge PARTS... --output_path DIR`: the partial files of a --shard run (or folders of
// them) in, the results and samples of the whole run out. The tasks are rebuilt from the recorded
// config (so the task files and datasets must be reachable here too) and scored with the parts'
// recorded answers.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/commands.hpp"
#include "cli/run_output.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/core/stop_signal.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/models/shard.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

namespace fs = std::filesystem;

struct MergeFlags {
  std::vector<std::string> parts;
  std::string output_path;
  bool show_normalized = false;
};

const char* const kPartExpected = "a shard_<I>of<N>.json from lm-eval run --shard";

// The part files named on the command line: a folder stands for the shard_<I>of<N>.json files
// in it (also <stem>_shard_<I>of<N>.json, the names beside a .json --output_path).
std::vector<std::string> part_files(const std::vector<std::string>& args) {
  static const std::regex kPartName(R"((.+_)?shard_[0-9]+of[0-9]+\.json)");
  std::vector<std::string> files;
  for (const auto& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      files.push_back(a);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(a, ec))
      if (std::regex_match(e.path().filename().string(), kPartName) && e.is_regular_file(ec))
        found.push_back(e.path().string());
    if (ec)
      throw UserError("cannot list folder " + a + ": " + ec.message(), {a, 0, 0, ""},
                      "a folder of parts");
    if (found.empty())
      throw UserError(
          "folder " + a + " holds no shard_<I>of<N>.json file", {a, 0, 0, ""},
          "the folder given to lm-eval run --shard I/N --output_path, or the part files");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace

int merge_parts(const std::vector<std::string>& names, const std::string& output_path) {
  std::vector<Json> parts;
  for (const auto& p : names) {
    const std::string text = read_input_file(p, "part", kPartExpected);
    require_json_nesting(text, p);
    try {
      parts.push_back(Json::parse(text));
    } catch (const Json::out_of_range& e) {
      throw_json_number_overflow(e, text, p);
    } catch (const Json::parse_error& e) {
      throw UserError(std::string("not JSON: ") + e.what(), {p, 0, 0, ""}, kPartExpected);
    }
  }
  check_output_path_writable(output_path);
  auto model = make_replay_lm(parts, names);
  // Part 1's config, whatever the order given (the parts may differ in output_path, use_cache).
  size_t first = 0;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].at("shard").at(0) == 1) first = i;
  EvalConfig cfg;
  try {
    cfg = eval_config_from_json(parts[first].at("config"));
  } catch (const Json::exception& e) {
    throw UserError(std::string("the recorded configuration cannot be read: ") + e.what(),
                    {names[first], 0, 0, "config"},
                    "the config object lm-eval run --shard records");
  }
  cfg.shard_index = cfg.shard_count = 0;
  cfg.output_path = output_path;
  install_stop_signal_handlers();
  EvalOutput out = evaluate(cfg, std::move(model));
  return report_run(cfg, out);
}

namespace {

int merge_main(const MergeFlags& f) { return merge_parts(part_files(f.parts), f.output_path); }

}  // namespace

void add_merge_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "merge", "Combine the partial files of `run --shard I/N` into one run's results");
  auto flags = std::make_shared<MergeFlags>();
  cmd->add_option("parts", flags->parts,
                  "shard_<I>of<N>.json files, one per part (any order), or folders holding them")
      ->required();
  cmd->add_option("--output_path,-o", flags->output_path,
                  "Directory (or .json file) for results and samples")
      ->required();
  cmd->add_flag("--show_normalized", flags->show_normalized,
                "Accepted for compatibility: normalised scores are shown whenever a task has a "
                "random baseline");
  cmd->callback([&action, flags] { action = [flags] { return merge_main(*flags); }; });
}

}  // namespace lmeval::cli

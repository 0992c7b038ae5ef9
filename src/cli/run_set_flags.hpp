// Flags shared by the commands that read finished runs (compare, analyze, report).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace lmeval::cli {

struct RunSetFlags {
  std::vector<std::string> runs;
  std::string output;
  long long seed = 1234;
  std::size_t resamples = 1000;
};

// RUN... (required), and --seed and --resamples unless `seed_help` is empty (a command that
// resamples nothing); `seed_help` says what the seed drives.
inline void add_run_set_options(CLI::App* cmd, RunSetFlags& f, const std::string& seed_help) {
  cmd->add_option("runs", f.runs, "Output folders or results files of `lm-eval run --log_samples`")
      ->required();
  if (seed_help.empty()) return;
  cmd->add_option("--seed", f.seed, seed_help + " (default 1234)");
  cmd->add_option("--resamples", f.resamples, "Bootstrap resamples (default 1000)")
      ->check(CLI::Range(1, 1000000));
}

}  // namespace lmeval::cli

// The subcommands of lm-eval: each file registers one on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace lmeval::cli {

// Set by the chosen subcommand's callback; returns the process exit code.
using Action = std::function<int()>;

void add_run_command(CLI::App& app, Action& action);
void add_ls_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_tokenize_command(CLI::App& app, Action& action);
void add_download_command(CLI::App& app, Action& action);
void add_merge_command(CLI::App& app, Action& action);
void add_compare_command(CLI::App& app, Action& action);
void add_analyze_command(CLI::App& app, Action& action);
void add_report_command(CLI::App& app, Action& action);
void add_power_command(CLI::App& app, Action& action);
void add_yaml_dump_command(CLI::App& app, Action& action);

}  // namespace lmeval::cli

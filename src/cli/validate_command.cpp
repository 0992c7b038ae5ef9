// `lm-eval validate`: check a config or task list without a model; all problems at once.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/evaluator/validator.hpp"

namespace lmeval::cli {

namespace {

int validate_main(RunFlags& f) {
  collect_dict_occurrences(raw_args(), f);
  ValidationReport report;
  EvalConfig cfg;
  bool built = false;
  try {
    cfg = build_eval_config(f, &report.problems);
    built = true;
  } catch (UserError& e) {
    report.problems.push_back(e);
  }
  // A configuration that could not be read (a --config file that is no YAML mapping) leaves no
  // run to check: its tasks and settings are unknown, not absent.
  if (built) validate_run(cfg, report);
  for (const auto& n : report.notes) std::cerr << "note: " << redact(n) << "\n";
  if (report.problems.empty()) {
    std::cout << "All tasks found and valid (" << report.tasks_checked << " tasks checked, "
              << report.docs_rendered << " rendered on their first document)\n";
    return 0;
  }
  std::cerr << report.problems.size() << " problem" << (report.problems.size() == 1 ? "" : "s")
            << " found:\n";
  std::vector<std::string> secrets;
  for (const auto& a : raw_args())
    for (auto& v : secret_values_in(a)) secrets.push_back(v);
  for (const auto& p : report.problems) std::cerr << "  " << redact(p.what(), secrets) << "\n";
  return 2;
}

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("validate", "Check a config or tasks without running a model");
  auto flags = std::make_shared<RunFlags>();
  add_run_flags(cmd, *flags, /*for_validate=*/false);
  cmd->callback([&action, flags] { action = [flags] { return validate_main(*flags); }; });
}

}  // namespace lmeval::cli

// `lm-eval power [RUN [RUN_B]] --difference D`: items needed to detect D at a given power.
#include <iostream>

#include "cli/commands.hpp"
#include "lmeval/analysis/power_analysis.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

struct PowerFlags {
  std::vector<std::string> runs;
  std::string output;
  analysis::PowerOptions opt;
  double accuracy = -1, sd = -1;
};

int power_main(PowerFlags f) {
  // Before any work: the atomic write would replace a symlink, FIFO or device.
  if (!f.output.empty()) check_output_file(f.output, "--output");
  if (f.accuracy >= 0) f.opt.accuracy = f.accuracy;
  if (f.sd >= 0) f.opt.sd = f.sd;
  const std::vector<analysis::Run> runs = analysis::load_runs(f.runs);
  const analysis::PowerAnalysis p = analysis::power_analysis(runs, f.opt);
  std::cout << analysis::render_text(p);
  if (!f.output.empty()) {
    write_text_file(f.output, py::json_dumps(analysis::to_json(p), {.indent = 2}) + "\n");
    std::cerr << "power analysis written to " << f.output << "\n";
  }
  return 0;
}

}  // namespace

void add_power_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "power",
      "Items needed to detect a target difference at a given power (from runs or a guess)");
  auto f = std::make_shared<PowerFlags>();
  cmd->add_option(
      "runs", f->runs,
      "Zero, one or two output folders or results files of `lm-eval run --log_samples`");
  cmd->add_option("--difference", f->opt.difference,
                  "The true difference to detect, in score units (e.g. 0.02)")
      ->required();
  cmd->add_option("--power", f->opt.power, "Power (default 0.8)");
  cmd->add_option("--alpha", f->opt.alpha, "Two-sided significance level (default 0.05)");
  cmd->add_option("--correlation", f->opt.correlation,
                  "Assumed per-item correlation of the two runs compared, with one run or a guess "
                  "(default 0: independent)");
  cmd->add_option("--accuracy", f->accuracy,
                  "Without a run: a guessed accuracy (per-item SD sqrt(p(1-p)))");
  cmd->add_option("--sd", f->sd,
                  "Without a run: a guessed per-item standard deviation of the score");
  cmd->add_option("-o,--output", f->output, "Also write the analysis as JSON to this file");
  cmd->callback([&action, f] { action = [f] { return power_main(*f); }; });
}

}  // namespace lmeval::cli

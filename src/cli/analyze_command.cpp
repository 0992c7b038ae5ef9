// `lm-eval analyze RUN...`: item analysis and rank stability across two or more runs.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_set_flags.hpp"
#include "lmeval/analysis/item_report.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

struct AnalyzeFlags : RunSetFlags {
  std::string metric;
};

int analyze_main(const AnalyzeFlags& f) {
  // Before any work: the atomic write would replace a symlink, FIFO or device.
  if (!f.output.empty()) check_output_file(f.output, "--output");
  if (f.runs.size() < 2)
    throw UserError(
        "analyze needs two or more runs of the same tasks; got " + std::to_string(f.runs.size()),
        {"", 0, 0, "RUN..."}, "at least two output folders or results files (e.g. one per model)");
  std::vector<analysis::Run> runs = analysis::load_runs(f.runs);
  analysis::AnalyzeOptions opt;
  opt.seed = f.seed;
  opt.resamples = f.resamples;
  opt.metric = f.metric;
  analysis::Analysis a = analysis::analyze_runs(runs, opt);
  std::cout << analysis::render_text(a);
  if (!f.output.empty()) {
    write_text_file(f.output, py::json_dumps(analysis::to_json(a), {.indent = 2}) + "\n");
    std::cerr << "analysis written to " << f.output << "\n";
  }
  return 0;
}

}  // namespace

void add_analyze_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "analyze", "Item analysis and bootstrap rank stability over two or more runs");
  auto f = std::make_shared<AnalyzeFlags>();
  add_run_set_options(cmd, *f, "Seed of the bootstrap resamples");
  cmd->add_option("-o,--output", f->output,
                  "Also write the full analysis (every item) as JSON to this file");
  cmd->add_option("--metric", f->metric,
                  "Metric (or metric,filter) to analyse; default each task's first");
  cmd->callback([&action, f] { action = [f] { return analyze_main(*f); }; });
}

}  // namespace lmeval::cli

// `lm-eval report RUN... --output report.html`: one self-contained HTML page.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_set_flags.hpp"
#include "lmeval/analysis/html_report.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

int report_main(const RunSetFlags& f) {
  // Before any work: the atomic write would replace a symlink, FIFO or device.
  check_output_file(f.output, "--output");
  std::vector<analysis::Run> runs = analysis::load_runs(f.runs);
  analysis::CompareOptions copt;
  analysis::AnalyzeOptions aopt;
  aopt.seed = f.seed;
  aopt.resamples = f.resamples;
  const std::string html =
      analysis::render_html_report(analysis::prepare_report(std::move(runs), copt, aopt));
  write_text_file(f.output, html);
  std::cerr << "report written to " << f.output << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("report", "One self-contained HTML report of one or more runs");
  auto f = std::make_shared<RunSetFlags>();
  add_run_set_options(cmd, *f, "Seed of the bootstrap resamples");
  cmd->add_option("-o,--output", f->output, "The HTML file to write")->required();
  cmd->callback([&action, f] { action = [f] { return report_main(*f); }; });
}

}  // namespace lmeval::cli

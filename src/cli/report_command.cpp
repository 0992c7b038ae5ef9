// `lm-eval report RUN... --output report.html`: one self-contained HTML page.
#include <iostream>

#include "cli/commands.hpp"
#include "lmeval/analysis/html_report.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

struct ReportFlags {
  std::vector<std::string> runs;
  std::string output;
  long long seed = 1234;
  std::size_t resamples = 1000;
};

int report_main(const ReportFlags& f) {
  std::vector<analysis::Run> runs = analysis::load_runs(f.runs);
  analysis::CompareOptions copt;
  copt.seed = f.seed;
  copt.resamples = f.resamples;
  analysis::AnalyzeOptions aopt;
  aopt.seed = f.seed;
  aopt.resamples = f.resamples;
  const std::string html = analysis::render_html_report(analysis::prepare_report(std::move(runs), copt, aopt));
  write_text_file(f.output, html);
  std::cerr << "report written to " << f.output << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("report", "One self-contained HTML report of one or more runs");
  auto f = std::make_shared<ReportFlags>();
  cmd->add_option("runs", f->runs, "Output folders or results files of `lm-eval run --log_samples`")->required();
  cmd->add_option("-o,--output", f->output, "The HTML file to write")->required();
  cmd->add_option("--seed", f->seed, "Seed of the bootstrap resamples (default 1234)");
  cmd->add_option("--resamples", f->resamples, "Bootstrap resamples (default 1000)")->check(CLI::Range(1, 1000000));
  cmd->callback([&action, f] { action = [f] { return report_main(*f); }; });
}

}  // namespace lmeval::cli

// `lm-eval compare RUN_A RUN_B [...]`: paired differences of each run against the first.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_set_flags.hpp"
#include "lmeval/analysis/comparison.hpp"
#include "lmeval/analysis/series.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

struct CompareFlags : RunSetFlags {
  std::string correction = "none";
  bool common_items = false;
  bool series = false;
};

int compare_main(const CompareFlags& f) {
  // Before any work: the atomic write would replace a symlink, FIFO or device.
  if (!f.output.empty()) check_output_file(f.output, "--output");
  if (f.runs.size() < 2)
    throw UserError("compare needs two or more runs; got " + std::to_string(f.runs.size()),
                    {"", 0, 0, "RUN..."},
                    "output folders or results files of `lm-eval run --log_samples`");
  std::vector<analysis::Run> runs = analysis::load_runs(f.runs);
  if (f.series) {
    const analysis::Series s = analysis::series_of(runs);
    std::cout << analysis::render_text(s);
    if (!f.output.empty()) {
      write_text_file(f.output, py::json_dumps(analysis::to_json(s), {.indent = 2}) + "\n");
      std::cerr << "series written to " << f.output << "\n";
    }
    return 0;
  }
  analysis::CompareOptions opt;
  opt.correction = f.correction;
  opt.common_items = f.common_items;
  Json all = {{"comparisons", Json::array()}};
  for (std::size_t r = 1; r < runs.size(); ++r) {
    analysis::Comparison c = analysis::compare_runs(runs[0], runs[r], opt);
    if (r > 1) std::cout << "\n";
    std::cout << analysis::render_text(c);
    all["comparisons"].push_back(analysis::to_json(c));
  }
  if (!f.output.empty()) {
    write_text_file(f.output, py::json_dumps(all, {.indent = 2}) + "\n");
    std::cerr << "comparison written to " << f.output << "\n";
  }
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "compare", "Paired differences between runs of the same prompts (each against the first)");
  auto f = std::make_shared<CompareFlags>();
  add_run_set_options(cmd, *f, "");
  cmd->add_option("-o,--output", f->output, "Also write the comparison as JSON to this file");
  cmd->add_option("--correction", f->correction,
                  "Adjust the p-values of all rows of a comparison for multiple testing: holm "
                  "(family-wise error) or bh "
                  "(Benjamini-Hochberg false discovery rate); the verdicts then use the adjusted p "
                  "(default none)")
      ->check(CLI::IsMember({"none", "holm", "bh"}));
  cmd->add_flag("--common_items", f->common_items,
                "Compare on the documents both runs answered (paired), saying how many were left "
                "out; runs of "
                "different tasks, configs or prompts are still refused");
  cmd->add_flag("--series", f->series,
                "The runs are checkpoints of one training run, in order: per task and metric, "
                "monotonicity (Kendall's "
                "tau) and signal-to-noise over the series instead of pairwise differences");
  cmd->callback([&action, f] { action = [f] { return compare_main(*f); }; });
}

}  // namespace lmeval::cli

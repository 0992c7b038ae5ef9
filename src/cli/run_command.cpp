// `lm-eval run`: flags -> EvalConfig -> evaluate -> files, summary line and tables.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/run_output.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

int run_main(RunFlags& f) {
  collect_dict_occurrences(raw_args(), f);
  EvalConfig cfg = build_eval_config(f);
  if (cfg.verbosity) {
    auto lvl = spdlog::level::from_str([&] {
      std::string s = *cfg.verbosity;
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s == "warning" ? std::string("warn") : s;
    }());
    spdlog::set_level(lvl);
  }
  if (cfg.limit && *cfg.limit != 0)
    spdlog::warn("--limit SHOULD ONLY BE USED FOR TESTING. REAL METRICS SHOULD NOT BE COMPUTED USING LIMIT.");
  cfg.finalize();
  // Accepted for compatibility but not implemented yet: say so rather than silently ignore.
  if (!cfg.cache_requests.empty())
    spdlog::info("--cache_requests: lm-eval rebuilds requests every run (it takes milliseconds); nothing to cache");
  if (cfg.shard_count > 0 && !cfg.output_path)
    throw UserError("--shard needs --output_path for its partial file", {"", 0, 0, "--output_path"},
                    "a directory shared with (or copied to) the machine that runs `lm-eval merge`");
  EvalOutput out = evaluate(cfg);
  if (!out.partial.is_null()) {
    for (const auto& w : out.write_out) std::fprintf(stderr, "%s\n", w.c_str());
    auto path = write_partial(cfg, out.partial);
    std::cout << "shard " << cfg.shard_index << "/" << cfg.shard_count << " written to " << path.string()
              << "; combine all parts with `lm-eval merge PARTS... --output_path DIR`\n";
    return 0;
  }
  return report_run(cfg, out);
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("run", "Evaluate a model on tasks (the reference's `lm-eval run`)");
  auto flags = std::make_shared<RunFlags>();
  add_run_flags(cmd, *flags);
  cmd->callback([&action, flags] { action = [flags] { return run_main(*flags); }; });
}

}  // namespace lmeval::cli

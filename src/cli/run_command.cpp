// `lm-eval run`: flags -> EvalConfig -> evaluate -> files, summary line and tables.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/launcher.hpp"
#include "cli/run_integrations.hpp"
#include "cli/run_options.hpp"
#include "cli/run_output.hpp"
#include "lmeval/config/adapter_runs.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/stop_signal.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/models/response_store.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

// The one line printed when a stop signal ends a run.
std::string resume_hint(const Interrupted& e, const EvalConfig& cfg) {
  std::string line = std::string(e.what()) + ": no results written; ";
  if (cfg.use_cache) {
    // Said only when true, with the count the file holds now (answers of the chunk in flight
    // when the stop came are not among them).
    const std::string file = *cfg.use_cache + "_rank0.db";
    const auto n = ResponseStore::count(file);
    if (n && *n > 0)
      return line + std::to_string(*n) + (*n == 1 ? " answer is" : " answers are") + " stored in " +
             file + ": run the same command (same --use_cache " + *cfg.use_cache +
             ") to resume from them";
    return line + "no answers were stored in " + file + " yet (a run stores them " +
           "chunk by chunk): rerunning the same command starts over";
  }
  return line + "add --use_cache PATH to a run to make it resumable";
}

int run_one(EvalConfig& cfg, const std::optional<Launch>& launch, LM* shared = nullptr);
int run_adapters(std::vector<EvalConfig>& runs, const std::optional<Launch>& launch);

int run_main(RunFlags& f) {
  collect_dict_occurrences(raw_args(), f);
  EvalConfig cfg = build_eval_config(f);
  // The reference applies --verbosity only after the evaluation (simple_evaluate calls
  // setup_logging(verbosity) at its end), so its DEBUG shows nothing of the run; here it applies
  // from the start (docs/fidelity.md). $LMEVAL_LOG_LEVEL wins over it in both.
  if (cfg.verbosity) {
    std::string level = log::apply_level(*cfg.verbosity);
    spdlog::debug("log level {} (--verbosity {}, LMEVAL_LOG_LEVEL {})", level, *cfg.verbosity,
                  std::getenv("LMEVAL_LOG_LEVEL") ? std::getenv("LMEVAL_LOG_LEVEL") : "unset");
  }
  if (cfg.limit && *cfg.limit != 0)
    spdlog::warn(
        "--limit SHOULD ONLY BE USED FOR TESTING. REAL METRICS SHOULD NOT BE COMPUTED USING "
        "LIMIT.");
  cfg.finalize();
  // The reference pickles each task's built requests (lm_eval/caching/cache.py) and reuses them
  // (true), rebuilds and rewrites them (refresh) or deletes its cache files (delete). lm-eval
  // builds them anew every run: said, never silently nothing (docs/fidelity.md).
  auto cache_flag = [&cfg](const char* key) {
    const auto it = cfg.cache_requests.find(key);
    return it != cfg.cache_requests.end() && it->is_boolean() && it->get<bool>();
  };
  if (cache_flag("cache_requests") || cache_flag("rewrite_requests_cache") ||
      cache_flag("delete_requests_cache")) {
    if (cache_flag("delete_requests_cache"))
      spdlog::warn(
          "--cache_requests delete: lm-eval keeps no requests cache, so there is nothing to "
          "delete (the reference's own cache, under LM_HARNESS_CACHE_PATH or "
          "lm_eval/caching/.cache, is left as it is)");
    else
      spdlog::warn(
          "--cache_requests {}: lm-eval keeps no requests cache; it builds every task's requests "
          "anew each run (milliseconds), which gives the requests a cache would. Model answers "
          "are cached with --use_cache",
          cache_flag("rewrite_requests_cache") ? "refresh" : "true");
  }
  // Started by torchrun or srun: this process's shard (an explicit --shard wins).
  std::optional<Launch> launch;
  if (cfg.shard_count == 0) launch = launch_from_env();
  if (launch) apply_launch(cfg, *launch);
  if (cfg.shard_count > 0 && !cfg.output_path)
    throw UserError("--shard needs --output_path for its partial file", {"", 0, 0, "--output_path"},
                    "a directory shared with (or copied to) the machine that runs `lm-eval merge`");
  if (launch) {
    // A leftover part of an earlier launch must not be taken for this one's.
    std::error_code ec;
    std::filesystem::remove(partial_path(cfg, cfg.shard_index), ec);
  }
  // Before the model phase: a run of hours must not find an unwritable folder at its end.
  if (cfg.output_path) check_output_path_writable(*cfg.output_path);
  prepare_integrations(cfg);
  install_stop_signal_handlers();
  std::vector<EvalConfig> runs = adapter_runs(cfg);
  if (runs.size() > 1) {
    if (cfg.shard_count > 0)
      throw UserError("several peft adapters cannot be sharded in one command",
                      {"", 0, 0, "--model_args peft"},
                      "one adapter per sharded run (or no --shard / launcher)");
    return run_adapters(runs, launch);
  }
  return run_one(cfg, launch);
}

// Several adapters over one base: the model is built once, with the first adapter, and switched
// to each next one when it can be (every adapter checked against it before the first run);
// otherwise each run builds its own.
int run_adapters(std::vector<EvalConfig>& runs, const std::optional<Launch>& launch) {
  std::vector<std::string> adapters;
  for (const auto& r : runs) adapters.push_back(r.model_args["peft"].get<std::string>());
  std::unique_ptr<LM> model = build_model(runs[0]);
  const bool shared = model->prepare_adapters(adapters);
  int code = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    spdlog::info("adapter {}/{}: {}", i + 1, runs.size(), adapters[i]);
    if (shared) model->use_adapter(i);
    // A model that cannot switch serves the first run only.
    LM* lent = shared || i == 0 ? model.get() : nullptr;
    const int c = run_one(runs[i], launch, lent);
    if (!shared && i == 0) model.reset();
    if (code == 0) code = c;
  }
  return code;
}

// One evaluation: the model phase, then the partial file of a shard or the results. `shared`: a
// model built from cfg that outlives the run.
int run_one(EvalConfig& cfg, const std::optional<Launch>& launch, LM* shared) {
  EvalOutput out;
  try {
    out = shared ? evaluate_on(cfg, *shared) : evaluate(cfg);
  } catch (const Interrupted& e) {
    throw Interrupted(e.signal(), resume_hint(e, cfg));
  }
  if (!out.partial.is_null()) {
    for (const auto& w : out.write_out) log::info(w);
    if (launch && !launch->run_id.empty()) out.partial["launch"] = launch->run_id;
    auto path = write_partial(cfg, out.partial);
    if (launch && launch->rank == 0) {
      spdlog::info("shard 1/{} written to {}; waiting for the other parts to merge them",
                   cfg.shard_count, path.string());
      std::vector<std::string> parts;
      for (const auto& p : wait_for_parts(cfg, *launch)) parts.push_back(p.string());
      return merge_parts(parts, *cfg.output_path);
    }
    std::cout << "shard " << cfg.shard_index << "/" << cfg.shard_count << " written to "
              << path.string()
              << "; combine all parts with `lm-eval merge PARTS... --output_path DIR`\n";
    return 0;
  }
  try {
    return report_run(cfg, out);
  } catch (const Interrupted& e) {
    throw Interrupted(e.signal(), resume_hint(e, cfg));
  }
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("run", "Evaluate a model on tasks (the reference's `lm-eval run`)");
  auto flags = std::make_shared<RunFlags>();
  add_run_flags(cmd, *flags);
  cmd->callback([&action, flags] { action = [flags] { return run_main(*flags); }; });
}

}  // namespace lmeval::cli

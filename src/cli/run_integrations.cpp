// --hf_hub_log_args and --wandb_args around a run (cli/run_integrations.hpp).
#include "cli/run_integrations.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "lmeval/core/error.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/output/hub_push.hpp"
#include "lmeval/output/wandb_log.hpp"

namespace lmeval::cli {

namespace {

bool wants_wandb(const EvalConfig& cfg) {
  return cfg.wandb_args.is_object() && !cfg.wandb_args.empty();
}

// The reference's cli_evaluate hands EvaluationTracker the token of HF_TOKEN only (not
// HF_HUB_TOKEN nor the token file).
hub::HubConfig push_config() {
  hub::HubConfig c = hub::HubConfig::from_env();
  c.token.reset();
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) c.token = t;
  c.offline = false;
  return c;
}

}  // namespace

void prepare_integrations(EvalConfig& cfg) {
  if (wants_wandb(cfg)) check_wandb_available();
  HubLogArgs hub_args = parse_hub_log_args(cfg.hf_hub_log_args);
  if (cfg.hf_hub_log_args.contains("push_samples_to_hub") && !cfg.log_samples)
    spdlog::warn("Pushing samples to the Hub requires --log_samples to be set.");
  if (!hub_args.pushes()) return;
  if (!cfg.output_path)
    spdlog::warn(
        "--hf_hub_log_args pushes the run's files, and without --output_path there are none: "
        "nothing will be pushed");
  hub::HubClient client(push_config());
  prepare_hub_push(client, hub_args);
  cfg.hf_hub_log_args["hub_results_org"] = hub_args.hub_results_org;
}

void log_to_integrations(const EvalConfig& cfg, const EvalOutput& out,
                         const WrittenFiles* written) {
  if (wants_wandb(cfg)) {
    std::vector<std::pair<std::string, std::vector<Json>>> samples;
    for (const auto& s : out.samples) samples.emplace_back(s.task, s.lines);
    auto w = log_to_wandb(cfg.wandb_args, cfg.wandb_config_args, out.results,
                          cfg.log_samples ? &samples : nullptr);
    if (!w.output.empty()) spdlog::info("wandb: {}", w.output);
    if (w.ok)
      spdlog::info("logged to W&B{}", w.message.empty() ? "" : ": " + w.message);
    else
      spdlog::warn("Logging to W&B failed: {}", w.message);
  }
  HubLogArgs hub_args = parse_hub_log_args(cfg.hf_hub_log_args);
  if (!hub_args.pushes() || !written) return;
  hub::HubClient client(push_config());
  auto report = push_run_to_hub(client, hub_args, out.results, *written);
  if (!report.failures.empty())
    spdlog::warn("{} of {} Hub push steps failed; the run's files stay in {}",
                 report.failures.size(), report.failures.size() + report.done.size(),
                 written->results.parent_path().string());
}

}  // namespace lmeval::cli

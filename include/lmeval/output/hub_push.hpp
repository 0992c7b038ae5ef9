// `--hf_hub_log_args`: a finished run's results and samples pushed to Hugging Face Hub dataset
// repos as the reference's EvaluationTracker pushes them (lm_eval/loggers/evaluation_tracker.py).
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval {

// EvaluationTracker's keyword arguments (output_path and token come from the run and HF_TOKEN).
struct HubLogArgs {
  std::string hub_results_org;  // "" = the token's user (resolve_hub_org)
  std::string details_repo_name = "lm-eval-results";
  std::string results_repo_name = "lm-eval-results";
  bool push_results_to_hub = false;
  bool push_samples_to_hub = false;
  bool public_repo = false;
  std::string leaderboard_url;
  std::string point_of_contact;
  bool gated = false;

  bool pushes() const { return push_results_to_hub || push_samples_to_hub; }
  // <org>/<name>, with "-private" appended unless public_repo (EvaluationTracker.__init__).
  std::string details_repo() const;
  std::string results_repo() const;
};

// From the --hf_hub_log_args dict (values as simple_parse_args_string types them): hub_repo_name
// sets both repo names as the reference's deprecated key does. An unknown key or a value of the
// wrong type is a UserError naming the key (the reference's TypeError).
HubLogArgs parse_hub_log_args(const Json& args);

// EvaluationTracker.__init__'s checks before any model or data: pushing needs a token (UserError
// naming HF_TOKEN) and, without hub_results_org, the token's user name (HfApi.whoami; a refused
// token is a RuntimeError).
void prepare_hub_push(hub::HubClient& client, HubLogArgs& args);

// What a push did, for the log.
struct HubPushReport {
  std::vector<std::string> done;      // "pushed <what> to <repo>"
  std::vector<std::string> failures;  // each failed step and why (token never included)
};

// save_results_aggregated's push, save_results_samples' push per task and recreate_metadata_card,
// over the files `write_outputs` wrote for `results`. As the reference, a step that fails is
// reported and the next one still runs.
HubPushReport push_run_to_hub(hub::HubClient& client, const HubLogArgs& args, const Json& results,
                              const WrittenFiles& files);

// recreate_metadata_card's reading of the details repo's listing: a config per model and task
// (and per model's results) whose files are the newest, each with a split named after its
// date and a "latest" split, sorted by name as datasets' MetadataConfigs writes them.
struct DatasetCardPlan {
  Json configs = Json::array();     // [{config_name, data_files: [{split, path: [..]}]}]
  std::string latest_results_file;  // the results file of the newest run (the card quotes it)
  std::string latest_datetime;
  std::string latest_config;  // the config of the newest run (the card's load_dataset example)
  size_t results_files = 0;
};
// A RuntimeError when the listing has no results file of the newest samples' run (the
// reference's IndexError).
DatasetCardPlan plan_dataset_card(const std::vector<std::string>& files_in_repo);

// The README.md: YAML front matter with the reference's keys (pretty_name, dataset_summary,
// repo_url, leaderboard_url, point_of_contact, configs); below it lm-eval's own short body rather
// than huggingface_hub's template (docs/fidelity.md). `latest_results` is the quoted file's
// "results".
std::string dataset_card_text(const HubLogArgs& args, const DatasetCardPlan& plan,
                              const std::string& repo_id, const std::string& endpoint,
                              const std::string& model_name, const std::string& model_source,
                              const Json& latest_results);

}  // namespace lmeval

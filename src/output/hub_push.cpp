// The reference's EvaluationTracker pushes (save_results_aggregated, save_results_samples,
// recreate_metadata_card) over lm-eval's Hub client.
#include "lmeval/output/hub_push.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/data/hub_upload.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

const char* const kKeys[] = {"hub_results_org",     "hub_repo_name",
                             "details_repo_name",   "results_repo_name",
                             "push_results_to_hub", "push_samples_to_hub",
                             "public_repo",         "leaderboard_url",
                             "point_of_contact",    "gated"};

std::string text_arg(const Json& v, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  // simple_parse_args_string turns digits into numbers; the reference formats them into names.
  if (v.is_number()) return py::repr(v);
  throw UserError("--hf_hub_log_args: '" + key + "' has the wrong type",
                  {"", 0, 0, "--hf_hub_log_args"}, "a string");
}

bool bool_arg(const Json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  throw UserError("--hf_hub_log_args: '" + key + "' has the wrong type",
                  {"", 0, 0, "--hf_hub_log_args"}, "True or False");
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw RuntimeError("cannot read " + p.string() + " to push it to the Hub");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

hub::RepoRef dataset_repo(const std::string& id) {
  return hub::RepoRef{.type = hub::RepoType::kDataset, .id = id, .revision = "main"};
}

// lm_eval.utils.get_file_task_name / get_file_datetime (the latter leaves ".json" on results
// files' dates, which keeps results configs off the card: reproduced).
std::string file_task_name(const std::string& name) {
  size_t a = name.find('_'), b = name.rfind('_');
  return a == std::string::npos || b <= a ? "" : name.substr(a + 1, b - a - 1);
}
std::string file_datetime(const std::string& name) {
  std::string d = name.substr(name.rfind('_') + 1);
  for (size_t p; (p = d.find(".jsonl")) != std::string::npos;) d.erase(p, 6);
  return d;
}
// re.sub(r"\W", "_", s): ASCII letters, digits and '_' stay; so do non-ASCII bytes (letters of
// other scripts are \w in Python).
std::string sanitize_word(const std::string& s, bool keep_dot) {
  std::string out = s;
  for (auto& c : out) {
    auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || u == '_' || u >= 0x80 || (keep_dot && u == '.'))) c = '_';
  }
  return out;
}
std::string parent_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? "." : path.substr(0, s);  // str(Path("x").parent) == "."
}
std::string base_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

// upload_folder's default ignores (huggingface_hub DEFAULT_IGNORE_PATTERNS).
bool ignored_by_upload_folder(const fs::path& rel) {
  std::string s = rel.generic_string();
  for (const auto& part : rel)
    if (part == ".git") return true;
  return s.find(".cache/huggingface") != std::string::npos;
}

std::string yaml_string(const std::string& s) { return Json(s).dump(); }

}  // namespace

std::string HubLogArgs::details_repo() const {
  return hub_results_org + "/" + details_repo_name + (public_repo ? "" : "-private");
}
std::string HubLogArgs::results_repo() const {
  return hub_results_org + "/" + results_repo_name + (public_repo ? "" : "-private");
}

HubLogArgs parse_hub_log_args(const Json& args) {
  HubLogArgs a;
  if (args.is_null()) return a;
  std::string details, results, hub_repo;
  for (const auto& [key, v] : args.items()) {
    // EvaluationTracker takes token= too; a token on the command line shows in `ps` and shell
    // history, so lm-eval reads it from HF_TOKEN only.
    if (key == "token")
      throw UserError("--hf_hub_log_args: the token is not taken from the command line",
                      {"", 0, 0, "--hf_hub_log_args token"}, "the token in HF_TOKEN");
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      std::string known;
      for (const char* k : kKeys) known += std::string(known.empty() ? "" : ", ") + k;
      throw UserError("--hf_hub_log_args: unknown key '" + key + "'",
                      {"", 0, 0, "--hf_hub_log_args"}, "one of " + known);
    }
    if (key == "hub_results_org") a.hub_results_org = text_arg(v, key);
    if (key == "hub_repo_name") hub_repo = text_arg(v, key);
    if (key == "details_repo_name") details = text_arg(v, key);
    if (key == "results_repo_name") results = text_arg(v, key);
    if (key == "leaderboard_url") a.leaderboard_url = text_arg(v, key);
    if (key == "point_of_contact") a.point_of_contact = text_arg(v, key);
    if (key == "push_results_to_hub") a.push_results_to_hub = bool_arg(v, key);
    if (key == "push_samples_to_hub") a.push_samples_to_hub = bool_arg(v, key);
    if (key == "public_repo") a.public_repo = bool_arg(v, key);
    if (key == "gated") a.gated = bool_arg(v, key);
  }
  // EvaluationTracker.__init__: hub_repo_name (deprecated) names both repos.
  if (!hub_repo.empty()) {
    spdlog::warn(
        "hub_repo_name was specified: details and results are pushed to the same repository "
        "(details_repo_name and results_repo_name are the keys to use)");
    a.details_repo_name = a.results_repo_name = hub_repo;
  } else {
    a.details_repo_name = details.empty() ? "lm-eval-results" : details;
    a.results_repo_name = results.empty() ? a.details_repo_name : results;
  }
  return a;
}

void prepare_hub_push(hub::HubClient& client, HubLogArgs& args) {
  if (!args.pushes()) return;
  if (!client.config().token)
    throw UserError(
        "--hf_hub_log_args: push_results_to_hub or push_samples_to_hub is set but HF_TOKEN is not",
        {"", 0, 0, "HF_TOKEN"}, "a Hugging Face token with write access in HF_TOKEN");
  if (args.hub_results_org.empty()) {
    args.hub_results_org = hub::whoami(client);
    spdlog::warn("hub_results_org was not specified. Results will be pushed to '{}'.",
                 args.hub_results_org);
  }
}

DatasetCardPlan plan_dataset_card(const std::vector<std::string>& files_in_repo) {
  std::vector<std::string> results_files, sample_files;
  for (const auto& f : files_in_repo) {
    bool json = f.find(".json") != std::string::npos;
    if (json && f.find("/results_") != std::string::npos) results_files.push_back(f);
    if (json && f.find("/samples_") != std::string::npos) sample_files.push_back(f);
  }
  // A defaultdict(lambda: datetime.min.isoformat()) in insertion order.
  std::vector<std::pair<std::string, std::string>> latest;
  auto at = [&](const std::string& key) -> std::string& {
    for (auto& [k, v] : latest)
      if (k == key) return v;
    latest.emplace_back(key, "0001-01-01T00:00:00");
    return latest.back().second;
  };
  for (const auto& f : sample_files) {
    std::string model = parent_of(f), name = base_of(f);
    std::string task_key = model + "__" + sanitize_word(file_task_name(name), false);
    std::string newest = std::max(at(task_key), file_datetime(name));
    at(task_key) = newest;
    std::string& r = at(model + "__results");
    r = std::max(r, newest);
  }
  std::map<std::string, Json> configs;  // sorted by name, as to_dataset_card_data sorts
  auto add = [&](const std::string& config, const std::string& file, const std::string& date) {
    std::string split = sanitize_word(date, true);
    if (split != sanitize_word(at(config), true)) return;
    Json& c = configs[config];
    if (c.is_null()) c = {{"data_files", Json::array()}};
    Json path = Json::array({"**/" + base_of(file)});
    c["data_files"].push_back({{"split", split}, {"path", path}});
    c["data_files"].push_back({{"split", "latest"}, {"path", path}});
  };
  for (const auto& f : results_files) add(parent_of(f) + "__results", f, file_datetime(base_of(f)));
  for (const auto& f : sample_files)
    add(parent_of(f) + "__" + sanitize_word(file_task_name(base_of(f)), false), f,
        file_datetime(base_of(f)));

  DatasetCardPlan plan;
  plan.results_files = results_files.size();
  for (auto& [name, c] : configs) {
    Json entry = {{"config_name", name}};
    entry["data_files"] = c["data_files"];
    plan.configs.push_back(entry);
  }
  for (const auto& [k, v] : latest)
    if (v > plan.latest_datetime) {
      plan.latest_datetime = v;
      plan.latest_config = k;
    }
  std::string needle = plan.latest_datetime;
  std::replace(needle.begin(), needle.end(), ':', '-');
  for (const auto& f : results_files)
    if (!needle.empty() && f.find(needle) != std::string::npos) {
      plan.latest_results_file = f;
      break;
    }
  if (plan.latest_results_file.empty())
    throw RuntimeError(
        "no results file of the newest run in the details repo (the card quotes one; push "
        "samples with push_samples_to_hub so that the repo holds them)");
  return plan;
}

std::string dataset_card_text(const HubLogArgs& args, const DatasetCardPlan& plan,
                              const std::string& repo_id, const std::string& endpoint,
                              const std::string& model_name, const std::string& model_source,
                              const Json& latest_results) {
  Json all = Json::object();
  all["all"] = latest_results;
  for (const auto& [k, v] : latest_results.items()) all[k] = v;
  std::string results_string = py::json_dumps(all, {.indent = 4, .ensure_ascii = true});
  std::string url = endpoint + "/datasets/" + repo_id + "/resolve/main/" +
                    hub::url_quote(plan.latest_results_file, true);
  std::string blob_url = url;
  blob_url.replace(blob_url.find("/resolve/"), 9, "/blob/");
  const bool hf = model_source == "hf";
  // recreate_metadata_card's dataset_summary, word for word.
  std::string s = "Dataset automatically created during the evaluation run of model ";
  s += hf ? "[" + model_name + "](https://huggingface.co/" + model_name + ")\n" : model_name + "\n";
  s += "The dataset is composed of " + std::to_string(static_cast<long>(plan.configs.size()) - 1) +
       " configuration(s), each one corresponding to one of the evaluated task.\n\n"
       "The dataset has been created from " +
       std::to_string(plan.results_files) +
       " run(s). Each run can be found as a specific split in each configuration, the split "
       "being named using the timestamp of the run.The \"train\" split is always pointing to "
       "the latest results.\n\nAn additional configuration \"results\" store all the aggregated "
       "results of the run.\n\nTo load the details from a run, you can for instance do the "
       "following:\n";
  if (hf)
    s += "```python\nfrom datasets import load_dataset\ndata = load_dataset(\n\t\"" + repo_id +
         "\",\n\tname=\"" + plan.latest_config + "\",\n\tsplit=\"latest\"\n)\n```\n\n";
  s += "## Latest results\n\nThese are the [latest results from run " + plan.latest_datetime +
       "](" + blob_url +
       ") (note that there might be results for other tasks in the repos if successive evals "
       "didn't cover the same tasks. You find each in the results and the \"latest\" split for "
       "each eval):\n\n```python\n" +
       results_string + "\n```";
  const std::string pretty = "Evaluation run of " + model_name;

  std::string y = "---\n";
  y += "pretty_name: " + yaml_string(pretty) + "\n";
  y += "dataset_summary: " + yaml_string(s) + "\n";
  y += "repo_url: " + yaml_string("https://huggingface.co/" + model_name) + "\n";
  y += "leaderboard_url: " + yaml_string(args.leaderboard_url) + "\n";
  y += "point_of_contact: " + yaml_string(args.point_of_contact) + "\n";
  y += "configs:\n";
  for (const auto& c : plan.configs) {
    y += "- config_name: " + yaml_string(c["config_name"].get<std::string>()) + "\n  data_files:\n";
    for (const auto& d : c["data_files"]) {
      y += "  - split: " + yaml_string(d["split"].get<std::string>()) + "\n    path:\n";
      for (const auto& p : d["path"]) y += "    - " + yaml_string(p.get<std::string>()) + "\n";
    }
  }
  y += "---\n\n# Dataset Card for " + pretty + "\n\n" + s + "\n\n" +
       "Written by lm-eval from the run's files in this repository: one configuration per model "
       "and task, one split per run, and a \"latest\" split for the newest.\n";
  return y;
}

HubPushReport push_run_to_hub(hub::HubClient& client, const HubLogArgs& args, const Json& results,
                              const WrittenFiles& files) {
  HubPushReport report;
  const std::string model_name = results.value("model_name", "");
  const std::string model_sanitized = results.value("model_name_sanitized", model_name);
  const std::string model_source = results.value("model_source", "");
  const bool is_private = !args.public_repo;
  auto step = [&](const std::string& what, const std::function<void()>& f) {
    try {
      f();
      report.done.push_back(what);
    } catch (const std::exception& e) {
      std::string why = client.scrub(e.what());
      spdlog::warn("Could not {}: {}", what, why);
      report.failures.push_back(what + ": " + why);
    }
  };

  if (args.push_results_to_hub && !files.results.empty()) {
    const std::string repo_id = args.results_repo();
    step("push the aggregated results to " + repo_id, [&] {
      auto repo = dataset_repo(repo_id);
      hub::create_repo(client, repo, is_private);
      hub::create_commit(
          client, repo,
          {{model_name + "/" + files.results.filename().string(), read_file(files.results)}},
          "Adding aggregated results for " + model_name);
      spdlog::info(
          "Successfully pushed aggregated results to the Hugging Face Hub. You can find them at: "
          "{}",
          repo_id);
    });
  }

  if (args.push_samples_to_hub && !files.samples.empty()) {
    const std::string repo_id = args.details_repo();
    const fs::path folder = files.samples.front().parent_path();
    // save_results_samples runs once per task in the results' configs order, each time writing
    // that task's file and uploading the whole folder: later tasks' files are not there yet.
    std::vector<std::pair<std::string, fs::path>> ordered;
    const Json configs = results.value("configs", Json::object());
    for (const auto& [task, cfg] : configs.items())
      for (const auto& p : files.samples)
        if (file_task_name(p.filename().string()) == task) ordered.emplace_back(task, p);
    std::set<fs::path> pending;
    for (const auto& [task, p] : ordered) pending.insert(p);
    for (const auto& entry : ordered) {
      // Plain names, not structured bindings: lambdas below capture them.
      const std::string& task = entry.first;
      const fs::path& sample_file = entry.second;
      pending.erase(sample_file);
      step("push the samples of " + task + " to " + repo_id, [&] {
        auto repo = dataset_repo(repo_id);
        hub::create_repo(client, repo, is_private);
        if (args.gated) {
          try {
            hub::set_gated(client, repo);
          } catch (const std::exception& e) {
            spdlog::warn("Could not gate the repository: {}", client.scrub(e.what()));
          }
        }
        std::vector<fs::path> paths;
        for (const auto& e : fs::recursive_directory_iterator(folder))
          if (e.is_regular_file() && !pending.count(e.path()) &&
              !ignored_by_upload_folder(e.path().lexically_relative(folder)))
            paths.push_back(e.path());
        std::sort(paths.begin(), paths.end());
        std::vector<hub::CommitFile> commit;
        for (const auto& p : paths)
          commit.push_back({model_sanitized + "/" + p.lexically_relative(folder).generic_string(),
                            read_file(p)});
        hub::create_commit(client, repo, commit,
                           "Adding samples results for " + task + " to " + model_name);
        spdlog::info(
            "Successfully pushed sample results for task: {} to the Hugging Face Hub. You can "
            "find them at: {}",
            task, repo_id);
      });
    }
  }

  if (args.pushes()) {
    const std::string repo_id = args.details_repo();
    step("recreate the dataset card of " + repo_id, [&] {
      auto repo = dataset_repo(repo_id);
      DatasetCardPlan plan = plan_dataset_card(hub::list_repo_files(client, repo));
      Json latest = Json::parse(hub::read_repo_file(client, repo, plan.latest_results_file));
      std::string card =
          dataset_card_text(args, plan, repo_id, client.config().endpoint, model_name, model_source,
                            latest.value("results", Json::object()));
      hub::create_commit(client, repo, {{"README.md", card}},
                         "Upload README.md with huggingface_hub");
    });
  }
  return report;
}

}  // namespace lmeval

// `lm-eval download`: fetch the Hub datasets of --tasks and the model files of --model_args into
// the Hugging Face cache, so that a later run works offline (HF_HUB_OFFLINE=1); with
// --task-library, the reference's task files from PyPI into lm-eval's cache.
#include <spdlog/spdlog.h>

#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/pypi_release.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/tasks/task_config.hpp"
#include "lmeval/tasks/task_index.hpp"
#include "lmeval/tasks/task_library_download.hpp"
#include "lmeval/tasks/task_selection.hpp"

namespace lmeval::cli {

namespace {

struct DownloadFlags {
  std::vector<std::string> tasks;
  std::string model_args;
  std::string include_path;
  bool task_library = false;
};

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& it : items) {
    size_t start = 0;
    while (start <= it.size()) {
      size_t c = it.find(',', start);
      std::string part = it.substr(start, c == std::string::npos ? std::string::npos : c - start);
      if (!part.empty()) out.push_back(part);
      if (c == std::string::npos) break;
      start = c + 1;
    }
  }
  return out;
}

// The reference's library first: the tasks asked for in the same command may be in it.
void download_library() {
  std::cout << "fetching the task library of " << kReferencePackage << " " << kReferenceVersion
            << " from " << pypi_base_url() << "\n";
  const TaskLibraryDownload got = download_task_library();
  std::cout << "task library: " << got.files << " files from " << got.url << " (sha256 "
            << got.sha256 << ", verified) in " << got.dir.string() << "\n";
}

int download_main(const DownloadFlags& f) {
  if (f.tasks.empty() && f.model_args.empty() && !f.task_library)
    throw UserError("nothing to download", {},
                    "--task-library, --tasks and/or --model_args pretrained=<repo>");
  if (f.task_library) download_library();
  if (f.tasks.empty() && f.model_args.empty()) return 0;
  auto client = std::make_shared<hub::HubClient>(hub::HubConfig::from_env(/*datasets=*/true));
  if (client->config().offline)
    throw UserError(
        "`lm-eval download` needs the Hub, but HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is set");
  std::cout << "cache: " << client->config().cache_dir.string() << "\n";
  int fetched = 0;
  if (!f.tasks.empty()) {
    EvalConfig cfg;
    if (!f.include_path.empty()) cfg.include_path = f.include_path;
    const auto wanted = split_commas(f.tasks);
    TaskIndex index = task_index_for(cfg, wanted);
    TaskSelection sel = select_tasks(index, wanted, Json::object());
    HubDataSource hub(client);
    std::set<std::string> done;
    for (const auto& t : sel.tasks) {
      DatasetRef ref = dataset_ref(t);
      if (!HubDataSource::is_hub_id(ref)) {
        std::cout << t.name() << ": dataset '" << ref.path << "' is local, nothing to fetch\n";
        continue;
      }
      std::vector<std::string> splits;
      for (TaskField k :
           {TaskField::test_split, TaskField::validation_split, TaskField::training_split})
        if (t.get(k).is_string()) splits.push_back(t.str(k));
      FewshotConfig fs = resolved_fewshot_config(t);
      if (fs.split.is_string()) splits.push_back(fs.split.get<std::string>());
      std::sort(splits.begin(), splits.end());
      splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
      std::string key = ref.path + "|" + ref.name.value_or("") + "|" + ref.kwargs.dump();
      for (const auto& s : splits) {
        if (!done.insert(key + "|" + s).second) continue;
        auto files = hub.fetch(ref, {s});
        fetched += static_cast<int>(files.size());
        std::cout << t.name() << ": " << ref.path << (ref.name ? " / " + *ref.name : "") << " ["
                  << s << "] " << files.size() << " file(s)\n";
      }
    }
  }
  if (!f.model_args.empty()) {
    Json args = merge_dict_flag({{f.model_args}}, "--model_args");
    std::string revision = args.contains("revision") && args["revision"].is_string()
                               ? args["revision"].get<std::string>()
                               : "main";
    // What the hf backend reads: subfolder inside pretrained and tokenizer, not inside peft or
    // delta (HFLM passes it to the first two only).
    const std::string subfolder = args.contains("subfolder") && args["subfolder"].is_string()
                                      ? args["subfolder"].get<std::string>()
                                      : "";
    for (const char* k : {"pretrained", "tokenizer", "delta", "peft"}) {
      if (!args.contains(k) || !args[k].is_string() || args[k] == "None") continue;
      const std::string v = args[k].get<std::string>();
      const std::string key = k;
      auto dir = key == "peft" ? hub::resolve_adapter_dir(*client, v, revision)
                               : hub::resolve_model_dir(*client, v, revision,
                                                        key == "delta" ? "" : subfolder);
      std::cout << k << " " << v << ": " << dir.string() << "\n";
      ++fetched;
    }
  }
  std::cout << "done (" << client->requests_made() << " Hub requests)\n";
  return 0;
}

}  // namespace

void add_download_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "download",
      "Fetch the Hub datasets of --tasks and the model of --model_args into the HF cache, or "
      "the reference's task library (--task-library)");
  auto f = std::make_shared<DownloadFlags>();
  cmd->add_option("--tasks,-t", f->tasks, "Tasks or groups (comma-separated)")->expected(1, -1);
  cmd->add_option("--model_args,-a", f->model_args,
                  "k=v,k=v (pretrained=org/name, revision=, subfolder=, peft=, delta=)");
  cmd->add_flag("--task-library,--task_library", f->task_library,
                "The reference's task files (lm-eval " + std::string(kReferenceVersion) +
                    ", from PyPI, sha256 checked) into lm-eval's cache: its tasks then run by "
                    "name without Python");
  cmd->add_option("--include_path", f->include_path,
                  "Extra folder(s) of task YAMLs, separated by ':'");
  cmd->callback([&action, f] { action = [f] { return download_main(*f); }; });
}

}  // namespace lmeval::cli

// Leaderboard normalisation.
#include "lmeval/metrics/leaderboard.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace lmeval {

double leaderboard_normalize(double raw, double lower) {
  if (raw < lower) return 0.0;
  return (raw - lower) / (1.0 - lower) * 100.0;
}

namespace {

// Fixed leaderboard bounds where the leaderboard does not use 1/num_choices of the data.
std::optional<double> fixed_lower_bound(const std::string& task) {
  if (task == "leaderboard_mmlu_pro") return 0.1;
  if (task == "leaderboard_musr_murder_mysteries") return 0.5;
  if (task == "leaderboard_musr_object_placements") return 0.2;
  if (task == "leaderboard_musr_team_allocation") return 1.0 / 3.0;
  if (task.rfind("leaderboard_gpqa", 0) == 0) return 0.25;
  return std::nullopt;
}

}  // namespace

Json leaderboard_normalized(const Json& rf, const std::map<std::string, double>& baselines) {
  Json tasks = Json::object();
  const Json& results = rf["results"];
  for (auto it = results.begin(); it != results.end(); ++it) {
    const std::string& task = it.key();
    auto fixed = fixed_lower_bound(task);
    auto b = baselines.find(task);
    if (!fixed && b == baselines.end()) continue;
    double lower = fixed ? *fixed : b->second;
    Json entry = Json::object();
    for (auto kt = it.value().begin(); kt != it.value().end(); ++kt) {
      const std::string& key = kt.key();
      if ((key.rfind("acc,", 0) == 0 || key.rfind("acc_norm,", 0) == 0) && kt.value().is_number()) {
        double raw = kt.value().get<double>();
        entry[key] = {{"raw", raw},
                      {"random_baseline", lower},
                      {"normalized", leaderboard_normalize(raw, lower)}};
      }
    }
    if (!entry.empty()) tasks[task] = entry;
  }
  Json lb = Json::object();
  auto metric = [&](const std::string& task, const std::string& key) -> std::optional<double> {
    if (!results.contains(task) || !results[task].contains(key) || !results[task][key].is_number())
      return std::nullopt;
    return results[task][key].get<double>();
  };
  // BBH and MuSR: unweighted mean of the normalised subtask acc_norm.
  for (const std::string prefix : {"leaderboard_bbh_", "leaderboard_musr_"}) {
    std::vector<double> vals;
    Json inputs = Json::object();
    for (auto it = results.begin(); it != results.end(); ++it) {
      if (it.key().rfind(prefix, 0) != 0) continue;
      auto raw = metric(it.key(), "acc_norm,none");
      if (!raw) continue;
      auto fixed = fixed_lower_bound(it.key());
      auto b = baselines.find(it.key());
      double lower = fixed ? *fixed : (b != baselines.end() ? b->second : 0.0);
      vals.push_back(leaderboard_normalize(*raw, lower));
      inputs[it.key()] = {{"raw", *raw}, {"random_baseline", lower}};
    }
    if (vals.empty()) continue;
    double sum = 0;
    for (double v : vals) sum += v;
    std::string name = prefix.substr(0, prefix.size() - 1);
    lb[name] = {{"normalized", sum / static_cast<double>(vals.size())},
                {"metric", "acc_norm,none"},
                {"rule", "unweighted mean of normalised subtask acc_norm"},
                {"inputs", inputs}};
  }
  if (auto g = metric("leaderboard_gpqa", "acc_norm,none"))
    lb["leaderboard_gpqa"] = {{"normalized", leaderboard_normalize(*g, 0.25)},
                              {"metric", "acc_norm,none"},
                              {"raw", *g},
                              {"random_baseline", 0.25}};
  if (auto m = metric("leaderboard_mmlu_pro", "acc,none"))
    lb["leaderboard_mmlu_pro"] = {{"normalized", leaderboard_normalize(*m, 0.1)},
                                  {"metric", "acc,none"},
                                  {"raw", *m},
                                  {"random_baseline", 0.1}};
  if (auto m = metric("leaderboard_math_hard", "exact_match,none"))
    lb["leaderboard_math_hard"] = {{"normalized", *m * 100.0},
                                   {"metric", "exact_match,none"},
                                   {"raw", *m},
                                   {"random_baseline", 0.0}};
  auto inst = metric("leaderboard_ifeval", "inst_level_strict_acc,none");
  auto prompt = metric("leaderboard_ifeval", "prompt_level_strict_acc,none");
  if (inst && prompt)
    lb["leaderboard_ifeval"] = {
        {"normalized", (*inst * 100.0 + *prompt * 100.0) / 2.0},
        {"rule", "mean of inst_level_strict_acc and prompt_level_strict_acc, x100"}};
  Json out = Json::object();
  out["tasks"] = tasks;
  if (!lb.empty()) out["leaderboard"] = lb;
  return out;
}

}  // namespace lmeval

// Replays of the reference's draws from its global Python `random` (see the header).
#include "global_random_replay.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "lmeval/core/py_random.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

void seed_global_random(const EvalConfig& cfg) {
  set_global_random(std::make_shared<PyRandom>(cfg.seed[0].value_or(0)));
  task_context().python_random_seed = cfg.seed[0];
  task_context().numpy_seed = cfg.seed.size() > 1 ? cfg.seed[1] : std::nullopt;
}

TaskNameDraws task_name_draws(const TaskSelection& selection) {
  TaskNameDraws d;
  d.after_task.assign(selection.tasks.size(), 0);
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < selection.tasks.size(); ++i) pos.emplace(selection.tasks[i].name(), i);
  std::set<std::string> group_names, grouped;
  for (const auto& g : selection.groups) group_names.insert(g.name);
  for (const auto& g : selection.groups) {
    grouped.insert(g.leaves.begin(), g.leaves.end());
    // A group is complete once its last leaf is built; nested groups complete before their
    // parent at the same leaf, and Group.add of each only reads its direct task members, so the
    // order among them does not change the count at that point.
    size_t last = 0;
    bool any = false;
    for (const auto& leaf : g.leaves)
      if (auto it = pos.find(leaf); it != pos.end()) last = std::max(last, it->second), any = true;
    if (!any) continue;
    size_t direct = 0;
    for (const auto& c : g.children) direct += !group_names.count(c) && pos.count(c);
    d.after_task[last] += 2 * direct;
  }
  for (const auto& t : selection.tasks) d.after_all += grouped.count(t.name()) ? 2 : 3;
  return d;
}

void draw_task_name_reads(PyRandom& rng, size_t reads) {
  for (size_t i = 0; i < reads * 8; ++i) rng.random();
}

std::string draw_model_name(const EvalConfig& cfg, PyRandom& rng) {
  for (const char* k : {"peft", "delta", "pretrained", "model", "path", "engine"})
    if (cfg.model_args.is_object() && cfg.model_args.contains(k)) return py::str(cfg.model_args[k]);
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string id;
  for (size_t i : rng.choices_indices(36, 8)) id += kChars[i];
  return id;
}

int eval_docs_reads_per_pass(const EvalConfig& cfg, const std::string& task_name) {
  bool by_samples = cfg.samples.is_object() && cfg.samples.contains(task_name) &&
                    cfg.samples[task_name].is_array() && !cfg.samples[task_name].empty();
  return by_samples ? 2 : 1;
}

void replay_eval_docs_reads_before_requests(const EvalConfig& cfg, Task& task, int reads_per_pass) {
  if (cfg.limit && *cfg.limit < 1.0) task.reaccess_eval_docs();
  for (int k = 0; k < reads_per_pass; ++k) task.reaccess_eval_docs();
}

void replay_eval_docs_reads_for_filter(Task& task, int reads_per_pass) {
  for (int k = 0; k < reads_per_pass; ++k) task.reaccess_eval_docs();
}

SeedPassRandom::SeedPassRandom()
    : after_planning_(std::make_shared<const PyRandom>(global_random())) {}

void SeedPassRandom::begin_building() const {
  set_global_random(std::make_shared<PyRandom>(*after_planning_));
}

std::shared_ptr<PyRandom> SeedPassRandom::state_after_building() { return global_random_ptr(); }

void SeedPassRandom::begin_scoring(const std::shared_ptr<PyRandom>& after_building) {
  set_global_random(after_building);
}

}  // namespace lmeval

// Per-answer scores of tasks with `repeats` > 1 (see repeat_scores.hpp).
#include "repeat_scores.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace lmeval {

bool scores_one_answer(const FilterEnsemble& f) {
  // The reference's filters that map each response of an instance independently (lm_eval/filters:
  // extraction.py, transformation.py) and take_first (selection.py).
  static constexpr std::array<std::string_view, 8> per_answer = {
      "regex",     "regex_pos", "remove_whitespace", "multi_choice_regex", "lowercase",
      "uppercase", "map",       "format_span"};
  bool takes_first = false;
  for (const auto& [function, kwargs] : f.steps()) {
    if (!function.is_string()) return false;  // a task's own filter class: unknown shape
    const std::string& name = function.get_ref<const std::string&>();
    if (name == "take_first")
      takes_first = true;
    else if (std::find(per_answer.begin(), per_answer.end(), name) == per_answer.end())
      return false;
  }
  return takes_first;
}

std::vector<std::vector<Json>> filter_each_repeat(const TaskPlan& plan,
                                                  const TaskRequests& requests,
                                                  const FilterEnsemble& f) {
  const auto& instances = requests.instances;
  if (instances.empty() || !scores_one_answer(f)) return {};
  std::size_t k = instances.front().resps.size();
  for (const auto& in : instances) k = std::min(k, in.resps.size());
  if (k < 2) return {};
  std::vector<const Json*> docs;
  for (const auto& in : instances) docs.push_back(&(*plan.request_docs)[in.doc_pos]);
  std::vector<std::vector<Json>> out;
  for (std::size_t r = 0; r < k; ++r) {
    std::vector<Json> one;
    one.reserve(instances.size());
    for (const auto& in : instances) one.push_back(Json::array({in.resps[r]}));
    out.push_back(f.apply(one, docs));
  }
  return out;
}

Json score_each_repeat(const Task& task, const std::vector<MetricSpec>& metrics, const Doc& doc,
                       const std::vector<const Instance*>& ins, const TaskRequests& requests,
                       const std::vector<std::vector<Json>>& by_repeat) {
  Json out = Json::object();
  if (by_repeat.empty() || ins.empty()) return out;
  std::vector<std::string> dropped;
  for (const auto& filtered : by_repeat) {
    std::vector<Json> results;
    for (const Instance* in : ins)
      results.push_back(filtered[static_cast<std::size_t>(in - requests.instances.data())]);
    const Json scores = process_results(task, metrics, doc, results);
    for (auto it = scores.begin(); it != scores.end(); ++it) {
      if (std::find(dropped.begin(), dropped.end(), it.key()) != dropped.end()) continue;
      // Corpus-level metrics (tuples), bypass (null): no per-answer score.
      if (!it.value().is_number() && !it.value().is_boolean()) {
        dropped.push_back(it.key());
        out.erase(it.key());
        continue;
      }
      if (!out.contains(it.key())) out[it.key()] = Json::array();
      out[it.key()].push_back(it.value());
    }
  }
  return out;
}

}  // namespace lmeval

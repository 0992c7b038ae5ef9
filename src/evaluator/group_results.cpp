// Group aggregation, bottom-up (the reference's consolidate_group_results; see results.hpp).
#include <functional>
#include <map>
#include <set>

#include "lmeval/metrics/metrics.hpp"
#include "results.hpp"
#include "run_statistics.hpp"

namespace lmeval {

void add_group_results(const std::vector<TaskOutcome>& tasks, const std::vector<GroupNode>& groups,
                       Json& results, Json& groups_section, Json& statistics) {
  std::map<std::string, const TaskOutcome*> by_name;
  for (const auto& t : tasks) by_name[t.task().name()] = &t;

  // Groups bottom-up: children before parents (post-order over the loaded tree).
  std::map<std::string, const GroupNode*> gmap;
  std::set<std::string> child_groups;
  for (const auto& g : groups) gmap[g.name] = &g;
  for (const auto& g : groups)
    for (const auto& c : g.children)
      if (gmap.count(c)) child_groups.insert(c);
  std::vector<const GroupNode*> post;
  std::set<std::string> visited;
  std::function<void(const GroupNode*)> visit = [&](const GroupNode* g) {
    if (visited.count(g->name)) return;
    visited.insert(g->name);
    for (const auto& c : g->children)
      if (gmap.count(c)) visit(gmap[c]);
    post.push_back(g);
  };
  for (const auto& g : groups)
    if (!child_groups.count(g.name)) visit(&g);

  for (const GroupNode* g : post) {
    Json e = Json::object();
    Json gstats = Json::object();
    e["alias"] = g->alias();
    e["name"] = g->name;
    if (g->has_aggregation()) {
      size_t sample_len = 0;
      for (const auto& leaf : g->leaves)
        if (by_name.count(leaf)) sample_len += by_name[leaf]->scores->sample_len;
      e["sample_len"] = sample_len;
      Json sample_count = Json::object();
      for (const auto& am : g->config.aggregate_metric_list) {
        std::string metric = am["metric"].get<std::string>();
        bool weight = am["weight_by_size"].is_boolean() ? am["weight_by_size"].get<bool>() : true;
        std::vector<std::string> filters;
        if (am["filter_list"].is_array()) {
          for (const auto& f : am["filter_list"]) filters.push_back(f.get<std::string>());
        } else {
          std::set<std::string> fs;
          for (const auto& leaf : g->leaves) {
            if (!by_name.count(leaf)) continue;
            for (const auto& k : by_name[leaf]->scores->keys)
              if (k.first == metric) fs.insert(k.second);
          }
          filters.assign(fs.begin(), fs.end());
        }
        for (const auto& f : filters) {
          std::vector<double> vals, sizes, ses;
          bool all_se = true;
          for (const auto& leaf : g->leaves) {
            if (!by_name.count(leaf)) continue;
            const Json& le = by_name[leaf]->result.entry;
            std::string key = metric + "," + f;
            if (!le.contains(key)) continue;
            vals.push_back(le[key].get<double>());
            sizes.push_back(static_cast<double>(by_name[leaf]->scores->sample_len));
            const Json& se = le[metric + "_stderr," + f];
            if (se.is_number())
              ses.push_back(se.get<double>());
            else
              all_se = false;
          }
          if (vals.empty()) continue;
          double num = 0, den = 0, total = 0;
          for (size_t i = 0; i < vals.size(); ++i) {
            double w = weight ? sizes[i] : 1.0;
            num += vals[i] * w;
            den += w;
            total += sizes[i];
          }
          e[metric + "," + f] = num / den;
          // Group.aggregate: the pooled stderr for the size-weighted mean, the stderr of the
          // plain mean for weight_by_size false.
          e[metric + "_stderr," + f] =
              all_se && ses.size() == vals.size()
                  ? Json(weight ? pooled_sample_stderr(ses, sizes) : unweighted_mean_stderr(ses))
                  : Json("N/A");
          sample_count[metric + "," + f] = static_cast<int64_t>(total);
          // A size-weighted mean of per-item means is the mean over all items: its stderr can be
          // clustered by subtask (e.g. MMLU's subjects).
          std::vector<double> pooled;
          std::vector<std::string> subtask_of;
          bool poolable = weight;
          for (const auto& leaf : g->leaves) {
            if (!poolable || !by_name.count(leaf)) continue;
            const TaskOutcome& lr = *by_name[leaf];
            auto it = lr.scores->items.find({metric, f});
            if (it == lr.scores->items.end()) continue;
            for (const auto& m : lr.plan->metrics)
              if (m.name == metric &&
                  (m.aggregation_fn || (!m.aggregation.empty() && m.aggregation != "mean")))
                poolable = false;
            for (const auto& v : it->second) {
              if (!v.is_number() && !v.is_boolean()) {
                poolable = false;
                break;
              }
              pooled.push_back(v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
              subtask_of.push_back(leaf);
            }
          }
          const Json& se_json = e[metric + "_stderr," + f];
          add_group_statistics(
              gstats, metric, f, num / den,
              se_json.is_number() ? std::optional<double>(se_json.get<double>()) : std::nullopt,
              poolable ? &pooled : nullptr, poolable ? &subtask_of : nullptr);
        }
      }
      if (!sample_count.empty()) e["sample_count"] = sample_count;
    }
    results[g->name] = e;
    if (g->has_aggregation()) {
      groups_section[g->name] = e;
      gstats["n"] = e.contains("sample_len") ? e["sample_len"] : Json();
      statistics[g->name] = gstats;
    }
  }
}

}  // namespace lmeval

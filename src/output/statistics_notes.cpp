// The notes under the --show_ci tables.
#include <string>

#include "lmeval/output/output_writer.hpp"

namespace lmeval {

std::string statistics_notes(const Json& results) {
  if (!results.contains("statistics") || !results["statistics"].is_object()) return "";
  std::string small, undefined;
  for (auto it = results["statistics"].begin(); it != results["statistics"].end(); ++it) {
    if (it.value().is_object())
      for (auto k = it.value().begin(); k != it.value().end(); ++k)
        if (k.key().find("_undefined,") != std::string::npos && k.value().is_string()) {
          const std::string name = k.key().substr(0, k.key().find("_undefined,"));
          undefined += it.key() + " " + name + "," + k.key().substr(k.key().find(',') + 1) +
                       " undefined: " + k.value().get<std::string>() + ".\n";
        }
    const Json& n = it.value().contains("n") ? it.value()["n"] : Json();
    // Tasks only: a group's interval comes from its subtasks' pooled stderr.
    if (n.is_number_integer() && n.get<int64_t>() < 100 && results["results"].contains(it.key()) &&
        !(results.contains("groups") && results["groups"].contains(it.key())))
      small += (small.empty() ? "" : ", ") + it.key() + " (n=" + n.dump() + ")";
  }
  std::string out =
      "95% CI: Wilson for 0/1 scores, Student t for other means, bootstrap percentiles for other "
      "aggregates; tasks with a cluster_key: from the clustered SE (t with G-1 df below 30 "
      "clusters); "
      "groups: normal, from the pooled stderr.\n"
      "Clustered SE: items sharing a cluster_key (or, for a group, a subtask) treated as one "
      "draw.\n"
      "MDE80: the smallest true difference between this run and another independent run of the "
      "same "
      "size that a two-sided 5% test finds 80% of the time, from the larger of the plain and the "
      "clustered SE; smaller differences are not evidence of anything (paired runs on the same "
      "items: "
      "see `lm-eval compare`).\n";
  out += undefined;
  if (!small.empty())
    out +=
        "Fewer than 100 items, where the normal approximation is poor (exact Clopper-Pearson "
        "interval "
        "for 0/1 scores, bootstrap percentiles otherwise): " +
        small + ".\n";
  return out;
}

}  // namespace lmeval

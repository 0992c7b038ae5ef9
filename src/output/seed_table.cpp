// The console table of the spread across few-shot seeds (--fewshot_seeds).
#include <algorithm>
#include <cstdio>

#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval {

namespace {

std::string fixed4(const Json& v) {
  if (!v.is_number()) return "N/A";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v.get<double>());
  return buf;
}

}  // namespace

std::string make_seed_variance_table(const Json& results) {
  const Json& spread = results["fewshot_seed_variance"];
  const Json& section = results.contains("results") ? results["results"] : Json::object();
  // A task's random baseline for a metric (the results' leaderboard_normalized), else null.
  auto baseline = [&](const std::string& task, const std::string& key) -> Json {
    const Json& ln =
        results.contains("leaderboard_normalized") ? results["leaderboard_normalized"] : Json();
    if (!ln.is_object() || !ln.contains("tasks") || !ln["tasks"].contains(task) ||
        !ln["tasks"][task].contains(key))
      return Json();
    const Json& b = ln["tasks"][task][key].contains("random_baseline")
                        ? ln["tasks"][task][key]["random_baseline"]
                        : Json();
    return b.is_number() ? b : Json();
  };
  bool normalized = false;
  std::vector<std::vector<Json>> rows;
  for (auto task = spread.begin(); task != spread.end(); ++task) {
    std::string name = task.key();
    if (section.contains(name) && section[name].contains("alias") &&
        section[name]["alias"].is_string())
      name = section[name]["alias"].get<std::string>();
    std::vector<std::string> keys;
    for (auto it = task.value().begin(); it != task.value().end(); ++it)
      if (it.key() != "seeds") keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    bool first = true;
    for (const auto& key : keys) {
      const Json& s = task.value()[key];
      auto comma = key.find(',');
      rows.push_back({first ? name : "", key.substr(comma + 1), key.substr(0, comma),
                      static_cast<int64_t>(task.value()["seeds"].size()), fixed4(s["mean"]), "±",
                      fixed4(s["std"]), fixed4(s["min"]), fixed4(s["max"])});
      // The leaderboard-normalised score of the mean, beside it on the same row.
      const Json b = baseline(task.key(), key);
      char buf[64] = "";
      if (b.is_number() && s["mean"].is_number())
        std::snprintf(buf, sizeof buf, "%.2f",
                      leaderboard_normalize(s["mean"].get<double>(), b.get<double>()));
      rows.back().push_back(std::string(buf));
      normalized = normalized || buf[0];
      first = false;
    }
  }
  std::vector<std::string> headers = {"Tasks", "Filter", "Metric", "Seeds", "Mean",
                                      "",      "Std",    "Min",    "Max"};
  if (normalized) {
    headers[4] = "Mean (raw)";
    headers.emplace_back("Mean normalised (leaderboard)");
  } else {
    for (auto& r : rows) r.pop_back();
  }
  return markdown_table(headers, rows);
}

}  // namespace lmeval

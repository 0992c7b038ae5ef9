// The console table of the spread across few-shot seeds (--fewshot_seeds).
#include <algorithm>
#include <cstdio>

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
  std::vector<std::vector<Json>> rows;
  for (auto task = spread.begin(); task != spread.end(); ++task) {
    std::string name = task.key();
    if (section.contains(name) && section[name].contains("alias") && section[name]["alias"].is_string())
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
      first = false;
    }
  }
  return markdown_table({"Tasks", "Filter", "Metric", "Seeds", "Mean", "", "Std", "Min", "Max"}, rows);
}

}  // namespace lmeval

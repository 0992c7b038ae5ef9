// Paired comparison of two runs: choose the test from the metric's values (McNemar's exact test for
// 0/1 scores, the paired t-test otherwise, a cluster-robust z-test when the task has a cluster_key),
// the interval from the task's size, and roll tasks up into their groups by size.
#include "lmeval/analysis/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"
#include "lmeval/analysis/comparability.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/stats/bootstrap.hpp"
#include "lmeval/stats/distributions.hpp"
#include "lmeval/stats/paired.hpp"
#include "lmeval/stats/power.hpp"

namespace lmeval::analysis {

namespace {

bool all_binary(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0 || v == 1.0; });
}

// The aggregation a task config declares for a metric ("mean" when it does not say).
std::string aggregation_of(const Json& config, const std::string& metric) {
  if (config.is_object() && config.contains("metric_list") && config["metric_list"].is_array())
    for (const auto& m : config["metric_list"])
      if (m.is_object() && m.value("metric", std::string()) == metric && m.contains("aggregation") && m["aggregation"].is_string())
        return m["aggregation"].get<std::string>();
  return "mean";
}

bool higher_is_better(const Json& results, const std::string& task, const std::string& metric) {
  if (results.contains("higher_is_better") && results["higher_is_better"].contains(task) &&
      results["higher_is_better"][task].contains(metric) && results["higher_is_better"][task][metric].is_boolean())
    return results["higher_is_better"][task][metric].get<bool>();
  return true;
}

std::vector<std::size_t> dense_clusters(const std::vector<std::string>& ids) {
  std::map<std::string, std::size_t> seen;
  std::vector<std::size_t> out;
  for (const auto& id : ids) out.push_back(seen.emplace(id, seen.size()).first->second);
  return out;
}

MetricComparison compare_metric(const std::string& task, const std::string& key, const TaskSamples& ta,
                                const TaskSamples& tb, const CompareOptions& opt) {
  MetricComparison m;
  m.task = task;
  std::size_t comma = key.find(',');
  m.metric = key.substr(0, comma);
  m.filter = comma == std::string::npos ? "none" : key.substr(comma + 1);
  const auto& sa = ta.scores.at(key);
  const auto& sb = tb.scores.at(key);
  std::vector<double> a, b;
  std::vector<std::string> cluster_ids;
  for (std::size_t i = 0; i < ta.items.size(); ++i) {
    auto it = tb.index.find(ta.items[i].key);
    if (it == tb.index.end() || std::isnan(sa[i]) || std::isnan(sb[it->second])) continue;
    a.push_back(sa[i]);
    b.push_back(sb[it->second]);
    cluster_ids.push_back(ta.items[i].cluster);
  }
  m.n = a.size();
  if (m.n == 0) return m;
  m.score_a = stats::mean(a);
  m.score_b = stats::mean(b);
  m.correlation = stats::pearson(a, b);
  const bool binary = all_binary(a) && all_binary(b);
  const bool clustered = !ta.cluster_key.empty();
  const stats::PairedT t = stats::paired_t(a, b);
  m.diff = t.diff;
  if (binary)
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] > b[i]) ++m.only_a;
      if (b[i] > a[i]) ++m.only_b;
    }
  std::vector<std::size_t> cluster;
  if (clustered) {
    cluster = dense_clusters(cluster_ids);
    const stats::ClusteredDifference c = stats::clustered_paired_difference(a, b, cluster_ids);
    m.clusters = c.clusters;
    m.test = "clustered_z";
    m.se = c.se;
    m.p = c.p;
    m.ci_low = c.ci_low;
    m.ci_high = c.ci_high;
    m.interval = "normal";
  } else if (binary) {
    m.test = "mcnemar_exact";
    m.se = t.se;
    m.p = stats::mcnemar_exact_p(m.only_a, m.only_b);
    const double z = stats::normal_quantile(0.975);
    m.ci_low = m.diff - z * m.se;
    m.ci_high = m.diff + z * m.se;
    m.interval = "normal";
  } else {
    m.test = "paired_t";
    m.se = t.se;
    m.p = t.p;
    m.ci_low = t.ci_low;
    m.ci_high = t.ci_high;
    m.interval = "t";
  }
  if (m.n < opt.exact_below) {
    std::vector<double> d(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
    stats::Interval iv;
    if (clustered) {
      iv = stats::clustered_bootstrap_mean_interval(d, cluster, stats::draw_resamples(m.clusters, opt.resamples, opt.seed));
      m.interval = "cluster_bootstrap";
    } else {
      iv = stats::bootstrap_mean_interval(d, stats::draw_resamples(d.size(), opt.resamples, opt.seed));
      m.interval = "bootstrap";
    }
    m.ci_low = iv.low;
    m.ci_high = iv.high;
    m.notes.push_back(fmt::format("{} items (< {}): the normal approximation is poor; the interval is a {} percentile "
                                  "bootstrap ({} resamples, seed {}){}",
                                  m.n, opt.exact_below, clustered ? "cluster" : "paired", opt.resamples, opt.seed,
                                  binary && !clustered ? " and the p-value McNemar's exact test" : ""));
  }
  m.mde = std::isnan(m.se) ? m.se : stats::minimum_detectable_difference(m.se);
  m.significant = !std::isnan(m.p) && m.p < 0.05;
  return m;
}

// Leaf tasks under a group, following nested groups in group_subtasks.
void leaf_tasks(const Json& group_subtasks, const std::string& group, std::vector<std::string>& out, int depth = 0) {
  if (depth > 32 || !group_subtasks.contains(group)) return;
  for (const auto& s : group_subtasks[group]) {
    if (!s.is_string()) continue;
    const std::string name = s.get<std::string>();
    if (group_subtasks.contains(name)) leaf_tasks(group_subtasks, name, out, depth + 1);
    else out.push_back(name);
  }
}

}  // namespace

Comparison compare_runs(const Run& a, const Run& b, const CompareOptions& opt) {
  Comparison c;
  c.label_a = a.label;
  c.label_b = b.label;
  c.source_a = a.source;
  c.source_b = b.source;
  const std::vector<std::string> tasks = common_tasks(a, b);
  for (const auto& t : a.tasks())
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) c.only_a.push_back(t);
  for (const auto& t : b.tasks())
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) c.only_b.push_back(t);
  require_same_prompts(a, b, tasks);
  c.setting_differences = setting_differences(a, b);
  for (const auto& task : tasks) {
    const TaskSamples& ta = a.samples.at(task);
    const TaskSamples& tb = b.samples.at(task);
    const Json& config = a.results["configs"][task];
    for (const auto& key : ta.score_keys) {
      if (!tb.scores.count(key)) continue;
      const std::string metric = key.substr(0, key.find(','));
      const std::string agg = aggregation_of(config, metric);
      if (agg != "mean") {
        c.skipped.push_back(task + " " + key + ": aggregated by '" + agg + "', not a mean of per-item scores");
        continue;
      }
      MetricComparison m = compare_metric(task, key, ta, tb, opt);
      if (m.n == 0) continue;
      m.higher_is_better = higher_is_better(a.results, task, metric);
      if (auto ns = normalized_score(a, task, key); ns && ns->random_baseline) {
        m.random_baseline = ns->random_baseline;
        m.norm_a = leaderboard_normalize(m.score_a, *ns->random_baseline);
        m.norm_b = leaderboard_normalize(m.score_b, *ns->random_baseline);
        m.norm_diff = m.norm_b - m.norm_a;
      }
      c.metrics.push_back(std::move(m));
    }
  }
  // Groups: size-weighted mean of their leaf tasks' differences, independent tasks' variances added.
  const Json& gs = a.results.contains("group_subtasks") ? a.results["group_subtasks"] : Json::object();
  for (auto it = gs.begin(); it != gs.end(); ++it) {
    std::vector<std::string> leaves;
    leaf_tasks(gs, it.key(), leaves);
    std::map<std::string, GroupComparison> by_key;
    std::vector<std::string> order;
    for (const auto& m : c.metrics) {
      if (std::find(leaves.begin(), leaves.end(), m.task) == leaves.end()) continue;
      const std::string key = m.metric + "," + m.filter;
      auto [g, fresh] = by_key.try_emplace(key);
      if (fresh) order.push_back(key);
      g->second.group = it.key();
      g->second.metric = m.metric;
      g->second.filter = m.filter;
      const double n = static_cast<double>(m.n);
      g->second.n += m.n;
      g->second.diff += n * m.diff;
      g->second.se += n * n * m.se * m.se;  // sum of n²·se² until normalised below
      g->second.tasks.push_back(m.task);
    }
    for (const auto& key : order) {
      GroupComparison g = by_key[key];
      const double total = static_cast<double>(g.n);
      g.diff /= total;
      g.se = std::sqrt(g.se) / total;
      const double z = stats::normal_quantile(0.975);
      g.ci_low = g.diff - z * g.se;
      g.ci_high = g.diff + z * g.se;
      g.p = g.se > 0 ? 2 * stats::normal_cdf(-std::fabs(g.diff / g.se)) : (g.diff == 0 ? 1.0 : 0.0);
      g.significant = g.p < 0.05;
      c.groups.push_back(std::move(g));
    }
  }
  return c;
}

namespace {
using format::fixed;
using format::p_value;
using format::signed_fixed;

}  // namespace

Json to_json(const Comparison& c) {
  Json j;
  j["run_a"] = {{"label", c.label_a}, {"source", c.source_a}};
  j["run_b"] = {{"label", c.label_b}, {"source", c.source_b}};
  j["difference"] = "run_b - run_a";
  Json rows = Json::array();
  for (const auto& m : c.metrics) {
    Json r;
    r["task"] = m.task;
    r["metric"] = m.metric;
    r["filter"] = m.filter;
    r["n"] = m.n;
    r["score_a"] = format::number(m.score_a);
    r["score_b"] = format::number(m.score_b);
    r["diff"] = format::number(m.diff);
    if (m.random_baseline)
      r["normalized"] = {{"random_baseline", *m.random_baseline}, {"score_a", format::number(m.norm_a)},
                         {"score_b", format::number(m.norm_b)}, {"diff", format::number(m.norm_diff)}};
    r["se"] = format::number(m.se);
    r["ci95"] = {format::number(m.ci_low), format::number(m.ci_high)};
    r["interval"] = m.interval;
    r["p_value"] = format::number(m.p);
    r["test"] = m.test;
    if (m.test == "mcnemar_exact") r["discordant"] = {{"only_a", m.only_a}, {"only_b", m.only_b}};
    if (m.clusters) r["clusters"] = m.clusters;
    r["correlation"] = format::number(m.correlation);
    r["mde80"] = format::number(m.mde);
    r["significant"] = m.significant;
    r["higher_is_better"] = m.higher_is_better;
    r["notes"] = m.notes;
    rows.push_back(r);
  }
  j["tasks"] = rows;
  Json groups = Json::array();
  for (const auto& g : c.groups)
    groups.push_back({{"group", g.group}, {"metric", g.metric}, {"filter", g.filter}, {"n", g.n}, {"diff", format::number(g.diff)},
                      {"se", format::number(g.se)}, {"ci95", {format::number(g.ci_low), format::number(g.ci_high)}}, {"p_value", format::number(g.p)},
                      {"significant", g.significant}, {"tasks", g.tasks}});
  j["groups"] = groups;
  j["only_in_a"] = c.only_a;
  j["only_in_b"] = c.only_b;
  j["setting_differences"] = c.setting_differences;
  j["skipped"] = c.skipped;
  return j;
}

std::string render_text(const Comparison& c) {
  std::string out = fmt::format("A: {} ({})\nB: {} ({})\ndifference = B - A\n\n", c.label_a, c.source_a, c.label_b, c.source_b);
  // Raw scores first, each column named; the leaderboard-normalised ones after, where any task has
  // a random baseline.
  const bool normalized = std::any_of(c.metrics.begin(), c.metrics.end(), [](const auto& m) { return m.random_baseline.has_value(); });
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : c.metrics) {
    rows.push_back({m.task, m.metric, m.filter, std::to_string(m.n), fixed(m.score_a), fixed(m.score_b), signed_fixed(m.diff), fixed(m.se),
                    "[" + signed_fixed(m.ci_low) + ", " + signed_fixed(m.ci_high) + "]", p_value(m.p), m.test, fixed(m.mde)});
    if (normalized) {
      const bool has = m.random_baseline.has_value();
      rows.back().insert(rows.back().end(), {has ? fixed(m.norm_a, 2) : "", has ? fixed(m.norm_b, 2) : "", has ? signed_fixed(m.norm_diff, 2) : ""});
    }
  }
  for (const auto& g : c.groups) {
    rows.push_back({g.group + " (group)", g.metric, g.filter, std::to_string(g.n), "", "", signed_fixed(g.diff), fixed(g.se),
                    "[" + signed_fixed(g.ci_low) + ", " + signed_fixed(g.ci_high) + "]", p_value(g.p), "size-weighted", ""});
    if (normalized) rows.back().insert(rows.back().end(), {"", "", ""});
  }
  std::vector<std::string> headers = {"Task", "Metric", "Filter", "n", "A (raw)", "B (raw)", "B-A (raw)", "SE", "95% CI", "p", "Test", "MDE80"};
  std::vector<bool> right = {false, false, false, true, true, true, true, true, false, true, false, true};
  if (normalized) {
    headers.insert(headers.end(), {"A (normalised)", "B (normalised)", "B-A (normalised)"});
    right.insert(right.end(), {true, true, true});
  }
  out += text_table(headers, rows, right);
  out += "\n";
  for (const auto& m : c.metrics)
    out += fmt::format("{} {},{}: B - A = {} (95% CI [{}, {}], p = {}): {}\n", m.task, m.metric, m.filter, signed_fixed(m.diff),
                       signed_fixed(m.ci_low), signed_fixed(m.ci_high), p_value(m.p),
                       m.significant ? "distinguishable from noise at 95%" : "not distinguishable from noise at 95%");
  for (const auto& g : c.groups)
    out += fmt::format("{} (group) {},{}: B - A = {} (95% CI [{}, {}], p = {}): {}\n", g.group, g.metric, g.filter,
                       signed_fixed(g.diff), signed_fixed(g.ci_low), signed_fixed(g.ci_high), p_value(g.p),
                       g.significant ? "distinguishable from noise at 95%" : "not distinguishable from noise at 95%");
  std::vector<std::string> notes;
  for (const auto& m : c.metrics) {
    notes.push_back(fmt::format("{} {},{}: per-item correlation {}; a true difference of {} would be detected with 80% "
                                "power at the 5% level", m.task, m.metric, m.filter, fixed(m.correlation), fixed(m.mde)));
    for (const auto& n : m.notes) notes.push_back(m.task + " " + m.metric + "," + m.filter + ": " + n);
  }
  if (normalized) {
    std::string baselines;
    for (const auto& m : c.metrics)
      if (m.random_baseline && baselines.find(m.task + " ") == std::string::npos)
        baselines += (baselines.empty() ? "" : ", ") + m.task + " " + fixed(*m.random_baseline);
    notes.push_back("(raw): the scores themselves, on which SE, CI, p and MDE80 are computed; (normalised): the Open "
                    "LLM Leaderboard's (raw - random baseline) / (1 - random baseline) x 100, clipped at 0, a 0-100 "
                    "scale not comparable with raw scores; random baselines: " + baselines);
  }
  for (const auto& s : c.setting_differences) notes.push_back("the runs differ in " + s);
  for (const auto& t : c.only_a) notes.push_back("task " + t + " only in A; not compared");
  for (const auto& t : c.only_b) notes.push_back("task " + t + " only in B; not compared");
  for (const auto& s : c.skipped) notes.push_back("not compared: " + s);
  if (!notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : notes) out += "- " + n + "\n";
  }
  return out;
}

}  // namespace lmeval::analysis

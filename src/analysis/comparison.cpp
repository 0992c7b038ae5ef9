// Paired comparison of two runs: choose the test from the metric's values (McNemar's exact test for
// 0/1 scores, the paired t-test otherwise, a cluster-robust z-test when the task has a
// cluster_key), the interval from the task's size, and roll tasks up into their groups by size.
#include "lmeval/analysis/comparison.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "lmeval/core/error.hpp"

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"
#include "lmeval/analysis/comparability.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/stats/distributions.hpp"
#include "lmeval/stats/multiple_testing.hpp"
#include "lmeval/stats/paired.hpp"
#include "lmeval/stats/power.hpp"
#include "lmeval/stats/seed_variance.hpp"

namespace lmeval::analysis {

namespace {

bool all_binary(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0 || v == 1.0; });
}

// The aggregation a task config declares for a metric ("mean" when it does not say).
std::string aggregation_of(const Json& config, const std::string& metric) {
  if (config.is_object() && config.contains("metric_list") && config["metric_list"].is_array())
    for (const auto& m : config["metric_list"])
      if (m.is_object() && m.value("metric", std::string()) == metric &&
          m.contains("aggregation") && m["aggregation"].is_string())
        return m["aggregation"].get<std::string>();
  return "mean";
}

bool higher_is_better(const Json& results, const std::string& task, const std::string& metric) {
  if (results.contains("higher_is_better") && results["higher_is_better"].contains(task) &&
      results["higher_is_better"][task].contains(metric) &&
      results["higher_is_better"][task][metric].is_boolean())
    return results["higher_is_better"][task][metric].get<bool>();
  return true;
}

MetricComparison compare_metric(const std::string& task, const std::string& key,
                                const TaskSamples& ta, const TaskSamples& tb,
                                const CompareOptions& opt) {
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
  m.se = t.se;
  double se_clustered = std::nan("");
  if (binary)
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] > b[i]) ++m.only_a;
      if (b[i] > a[i]) ++m.only_b;
    }
  const std::string small = fmt::format("{} items (< {})", m.n, opt.small_below);
  if (clustered) {
    // The test and its interval both from the cluster-robust SE (z, or t with G − 1 df).
    const stats::ClusteredDifference c = stats::clustered_paired_difference(a, b, cluster_ids);
    m.clusters = c.clusters;
    m.df = c.df;
    m.se = se_clustered = c.se;
    m.p = c.p;
    m.ci_low = c.ci_low;
    m.ci_high = c.ci_high;
    if (std::isinf(c.df)) {
      m.test = "clustered_z";
      m.interval = "normal";
    } else {
      m.test = "clustered_t";
      m.interval = "cluster_t";
      m.notes.push_back(fmt::format(
          "{} clusters (< {}): the cluster-robust z is too liberal with few clusters, so the "
          "test and its interval use t with {} df",
          c.clusters, stats::kFewClusters, c.clusters - 1));
    }
    if (c.clusters < 2)
      m.undefined["se"] = "fewer than 2 clusters: the cluster-robust SE needs two";
  } else if (binary) {
    // McNemar's exact test and the exact interval it inverts (conditional on the discordant items).
    const stats::McNemarDifference e = stats::mcnemar_difference(m.only_a, m.only_b, m.n);
    m.test = "mcnemar_exact";
    m.interval = "exact_conditional";
    m.p = e.p;
    m.ci_low = e.ci_low;
    m.ci_high = e.ci_high;
    if (m.n < opt.small_below)
      m.notes.push_back(small + ": McNemar's exact test and the Clopper-Pearson interval of its " +
                        std::to_string(e.discordant) +
                        " discordant items, which that test inverts; no normal approximation");
  } else {
    m.test = "paired_t";
    m.interval = "t";
    m.df = t.df;
    m.p = t.p;
    m.ci_low = t.ci_low;
    m.ci_high = t.ci_high;
    if (m.n < opt.small_below)
      m.notes.push_back(
          small + ": paired t-test and its t interval (" + std::to_string(m.n - 1) +
          " df); exact if the per-item differences are normal, approximate otherwise");
  }
  // Undefined statistics, each with its reason (never printed as 0).
  if (m.n < 2)
    m.undefined["se"] = "one item: no spread to estimate the standard error from";
  else if (m.se == 0)
    m.undefined["se"] = binary && m.only_a + m.only_b == 0
                            ? "the runs agree on every item: the standard error is 0"
                            : "every item's difference is the same: the standard error is 0";
  if (std::isnan(m.ci_low)) {
    if (m.test == "mcnemar_exact" && m.only_a + m.only_b == 0)
      m.undefined["ci95"] =
          "no discordant items: the exact interval has nothing to estimate the difference's spread "
          "from";
    else
      m.undefined["ci95"] = m.undefined.count("se") ? m.undefined["se"] : "undefined";
  }
  if (std::isnan(m.p))
    m.undefined["p_value"] = m.undefined.count("se") ? m.undefined["se"] : "undefined";
  // Few-shot seeds: the score is the mean over the seeds, and its total SE counts the seeds too.
  m.se_total = m.se_items = m.se_seeds = std::nan("");
  m.seeds = ta.fewshot_seeds.size();
  m.score_basis =
      m.seeds >= 2 ? fmt::format("mean of {} few-shot seeds", m.seeds) : "one few-shot seed";
  if (m.seeds >= 2 && ta.fewshot_seeds == tb.fewshot_seeds && ta.seed_scores.count(key) &&
      tb.seed_scores.count(key)) {
    const auto& xa = ta.seed_scores.at(key);
    const auto& xb = tb.seed_scores.at(key);
    std::vector<std::vector<double>> d(m.seeds);
    for (std::size_t i = 0; i < ta.items.size(); ++i) {
      auto it = tb.index.find(ta.items[i].key);
      if (it == tb.index.end()) continue;
      bool complete = true;
      for (std::size_t k = 0; k < m.seeds; ++k)
        complete = complete && !std::isnan(xa[k][i]) && !std::isnan(xb[k][it->second]);
      if (!complete) continue;
      for (std::size_t k = 0; k < m.seeds; ++k) d[k].push_back(xb[k][it->second] - xa[k][i]);
    }
    const stats::SeedItemStderr st = stats::seed_item_stderr(d);
    m.se_total = st.total;
    m.se_items = st.items;
    m.se_seeds = st.seeds;
    m.notes.push_back(fmt::format(
        "scores are means over {} few-shot seeds; total SE of the difference over items and seeds "
        "{} "
        "(items alone {}, seeds {}); the test holds the seeds fixed, the MDE uses the larger SE",
        m.seeds, format::fixed(st.total), format::fixed(st.items), format::fixed(st.seeds)));
  }
  // MDE and power from the conservative SE: the larger of the paired, the clustered and the total
  // one.
  m.se_mde = stats::conservative_stderr(stats::conservative_stderr(t.se, se_clustered), m.se_total);
  if (m.se_mde > 0) {
    m.mde = stats::minimum_detectable_difference(m.se_mde);
  } else {
    m.mde = std::nan("");
    m.undefined["mde80"] =
        m.undefined.count("se")
            ? m.undefined["se"] + ", so no detectable size can be derived from it"
            : "the standard error is undefined";
  }
  m.p_adjusted = std::nan("");
  m.significant = !std::isnan(m.p) && m.p < 0.05;
  return m;
}

// Leaf tasks under a group, following nested groups in group_subtasks.
void leaf_tasks(const Json& group_subtasks, const std::string& group, std::vector<std::string>& out,
                int depth = 0) {
  if (depth > 32 || !group_subtasks.contains(group)) return;
  for (const auto& s : group_subtasks[group]) {
    if (!s.is_string()) continue;
    const std::string name = s.get<std::string>();
    if (group_subtasks.contains(name))
      leaf_tasks(group_subtasks, name, out, depth + 1);
    else
      out.push_back(name);
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
  if (opt.correction != "none" && opt.correction != "holm" && opt.correction != "bh")
    throw UserError("unknown correction '" + opt.correction + "'", {"", 0, 0, "--correction"},
                    "none, holm or bh");
  c.correction = opt.correction;
  require_same_prompts(a, b, tasks, opt.common_items);
  if (opt.common_items) c.dropped = dropped_documents(a, b, tasks);
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
        c.skipped.push_back(task + " " + key + ": aggregated by '" + agg +
                            "', not a mean of per-item scores");
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
  // Many rows at once: adjust their p-values as a family, and give the verdict on the adjusted
  // ones.
  if (c.correction != "none") {
    std::vector<double> ps;
    for (const auto& m : c.metrics) ps.push_back(m.p);
    const std::vector<double> adj =
        c.correction == "holm" ? stats::holm_adjusted(ps) : stats::bh_adjusted(ps);
    for (std::size_t i = 0; i < c.metrics.size(); ++i) {
      c.metrics[i].p_adjusted = adj[i];
      c.metrics[i].significant = !std::isnan(adj[i]) && adj[i] < 0.05;
    }
  }
  // Groups: size-weighted mean of their leaf tasks' differences, independent tasks' variances
  // added.
  const Json& gs =
      a.results.contains("group_subtasks") ? a.results["group_subtasks"] : Json::object();
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
      if (g.se > 0) {
        g.ci_low = g.diff - z * g.se;
        g.ci_high = g.diff + z * g.se;
        g.p = 2 * stats::normal_cdf(-std::fabs(g.diff / g.se));
      } else {
        // Zero (or undefined) SE: no interval; identical runs are "no difference".
        g.ci_low = g.ci_high = std::nan("");
        g.p = g.se == 0 && g.diff == 0 ? 1.0 : std::nan("");
      }
      g.significant = !std::isnan(g.p) && g.p < 0.05;
      c.groups.push_back(std::move(g));
    }
  }
  return c;
}

namespace {
using format::fixed;
using format::p_value;
using format::signed_fixed;

// Undefined numbers read "undefined" (their reason is in the notes), never 0.
std::string or_undefined(const std::string& cell, double v) {
  return std::isnan(v) ? "undefined" : cell;
}
std::string interval_cell(double lo, double hi) {
  return std::isnan(lo) || std::isnan(hi) ? "undefined"
                                          : "[" + signed_fixed(lo) + ", " + signed_fixed(hi) + "]";
}
std::string correction_name(const std::string& c) {
  return c == "holm" ? "Holm" : "Benjamini-Hochberg";
}

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
      r["normalized"] = {{"random_baseline", *m.random_baseline},
                         {"score_a", format::number(m.norm_a)},
                         {"score_b", format::number(m.norm_b)},
                         {"diff", format::number(m.norm_diff)}};
    r["se"] = format::number(m.se);
    r["ci95"] = std::isnan(m.ci_low) || std::isnan(m.ci_high)
                    ? Json()
                    : Json{format::number(m.ci_low), format::number(m.ci_high)};
    r["interval"] = m.interval;
    r["p_value"] = format::number(m.p);
    if (c.correction != "none") r["p_adjusted"] = format::number(m.p_adjusted);
    r["test"] = m.test;
    if (m.df > 0 && std::isfinite(m.df)) r["df"] = m.df;
    if (m.test == "mcnemar_exact") r["discordant"] = {{"only_a", m.only_a}, {"only_b", m.only_b}};
    if (m.clusters) r["clusters"] = m.clusters;
    r["correlation"] = format::number(m.correlation);
    r["score_basis"] = m.score_basis;
    if (m.seeds >= 2)
      r["seeds"] = {{"count", m.seeds},
                    {"se_total", format::number(m.se_total)},
                    {"se_items", format::number(m.se_items)},
                    {"se_seeds", format::number(m.se_seeds)}};
    r["se_for_mde"] = format::number(m.se_mde);
    r["mde80"] = format::number(m.mde);
    r["significant"] = m.significant;
    r["higher_is_better"] = m.higher_is_better;
    if (!m.undefined.empty()) {
      r["undefined"] = Json::object();
      for (const auto& [k, v] : m.undefined) r["undefined"][k] = v;
    }
    r["notes"] = m.notes;
    rows.push_back(r);
  }
  j["tasks"] = rows;
  Json groups = Json::array();
  for (const auto& g : c.groups)
    groups.push_back(
        {{"group", g.group},
         {"metric", g.metric},
         {"filter", g.filter},
         {"n", g.n},
         {"diff", format::number(g.diff)},
         {"se", format::number(g.se)},
         {"ci95", std::isnan(g.ci_low) ? Json()
                                       : Json{format::number(g.ci_low), format::number(g.ci_high)}},
         {"p_value", format::number(g.p)},
         {"significant", g.significant},
         {"tasks", g.tasks}});
  j["groups"] = groups;
  j["only_in_a"] = c.only_a;
  j["only_in_b"] = c.only_b;
  j["setting_differences"] = c.setting_differences;
  j["skipped"] = c.skipped;
  j["correction"] = c.correction;
  if (!c.dropped.empty()) j["common_items"] = c.dropped;
  return j;
}

std::string render_text(const Comparison& c) {
  std::string out = fmt::format("A: {} ({})\nB: {} ({})\ndifference = B - A\n\n", c.label_a,
                                c.source_a, c.label_b, c.source_b);
  // Raw scores first, each column named; the leaderboard-normalised ones after, where any task has
  // a random baseline.
  const bool normalized = std::any_of(c.metrics.begin(), c.metrics.end(),
                                      [](const auto& m) { return m.random_baseline.has_value(); });
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : c.metrics) {
    rows.push_back({m.task, m.metric, m.filter, std::to_string(m.n), fixed(m.score_a),
                    fixed(m.score_b), signed_fixed(m.diff), or_undefined(fixed(m.se), m.se),
                    interval_cell(m.ci_low, m.ci_high), or_undefined(p_value(m.p), m.p), m.test,
                    or_undefined(fixed(m.mde), m.mde)});
    if (c.correction != "none")
      rows.back().insert(rows.back().begin() + 10,
                         or_undefined(p_value(m.p_adjusted), m.p_adjusted));
    if (normalized) {
      const bool has = m.random_baseline.has_value();
      rows.back().insert(rows.back().end(),
                         {has ? fixed(m.norm_a, 2) : "", has ? fixed(m.norm_b, 2) : "",
                          has ? signed_fixed(m.norm_diff, 2) : ""});
    }
  }
  for (const auto& g : c.groups) {
    rows.push_back({g.group + " (group)", g.metric, g.filter, std::to_string(g.n), "", "",
                    signed_fixed(g.diff), or_undefined(fixed(g.se), g.se),
                    interval_cell(g.ci_low, g.ci_high), or_undefined(p_value(g.p), g.p),
                    "size-weighted", ""});
    if (c.correction != "none") rows.back().insert(rows.back().begin() + 10, "");
    if (normalized) rows.back().insert(rows.back().end(), {"", "", ""});
  }
  std::vector<std::string> headers = {"Task",      "Metric", "Filter", "n", "A (raw)", "B (raw)",
                                      "B-A (raw)", "SE",     "95% CI", "p", "Test",    "MDE80"};
  std::vector<bool> right = {false, false, false, true, true,  true,
                             true,  true,  false, true, false, true};
  if (c.correction != "none") {
    headers.insert(headers.begin() + 10, "p (" + c.correction + ")");
    right.insert(right.begin() + 10, true);
  }
  if (normalized) {
    headers.insert(headers.end(), {"A (normalised)", "B (normalised)", "B-A (normalised)"});
    right.insert(right.end(), {true, true, true});
  }
  out += text_table(headers, rows, right);
  out += "\n";
  for (const auto& m : c.metrics) {
    std::string verdict = m.significant ? "distinguishable from noise at 95%"
                                        : "not distinguishable from noise at 95%";
    const double p_used = c.correction != "none" ? m.p_adjusted : m.p;
    if (std::isnan(p_used))
      verdict =
          "undefined (" +
          (m.undefined.count("p_value") ? m.undefined.at("p_value") : std::string("no p-value")) +
          ")";
    std::string p_text = "p = " + or_undefined(p_value(m.p), m.p);
    if (c.correction != "none")
      p_text += ", " + c.correction +
                "-adjusted p = " + or_undefined(p_value(m.p_adjusted), m.p_adjusted);
    out += fmt::format("{} {},{}: B - A = {} (95% CI {}, {}): {}\n", m.task, m.metric, m.filter,
                       signed_fixed(m.diff), interval_cell(m.ci_low, m.ci_high), p_text, verdict);
  }
  for (const auto& g : c.groups)
    out += fmt::format("{} (group) {},{}: B - A = {} (95% CI {}, p = {}): {}\n", g.group, g.metric,
                       g.filter, signed_fixed(g.diff), interval_cell(g.ci_low, g.ci_high),
                       or_undefined(p_value(g.p), g.p),
                       std::isnan(g.p) ? "undefined (zero standard error)"
                       : g.significant ? "distinguishable from noise at 95%"
                                       : "not distinguishable from noise at 95%");
  std::vector<std::string> notes;
  for (const auto& m : c.metrics) {
    const std::string row = m.task + " " + m.metric + "," + m.filter + ": ";
    if (std::isnan(m.mde))
      notes.push_back(row + "per-item correlation " + fixed(m.correlation) + "; MDE80 undefined: " +
                      (m.undefined.count("mde80") ? m.undefined.at("mde80")
                                                  : std::string("no standard error")));
    else
      notes.push_back(fmt::format(
          "{}per-item correlation {}; a true difference of {} would be detected with 80% "
          "power at the 5% level{}",
          row, fixed(m.correlation), fixed(m.mde),
          m.clusters
              ? " (from the larger of the paired and the clustered SE, " + fixed(m.se_mde) + ")"
              : ""));
    for (const auto& [k, why] : m.undefined)
      if (k != "mde80")
        notes.push_back(row +
                        (k == "ci95"      ? "95% CI"
                         : k == "p_value" ? "p"
                                          : "SE") +
                        " undefined: " + why);
    for (const auto& n : m.notes) notes.push_back(row + n);
  }
  if (c.correction != "none")
    notes.push_back("p (" + c.correction + "): " + correction_name(c.correction) +
                    "-adjusted over the " + std::to_string(c.metrics.size()) +
                    " task rows of this comparison; the verdicts use it, the intervals "
                    "are the unadjusted 95% ones");
  for (const auto& d : c.dropped) notes.push_back("--common_items: " + d);
  if (normalized) {
    std::string baselines;
    for (const auto& m : c.metrics)
      if (m.random_baseline && baselines.find(m.task + " ") == std::string::npos)
        baselines += (baselines.empty() ? "" : ", ") + m.task + " " + fixed(*m.random_baseline);
    notes.push_back(
        "(raw): the scores themselves, on which SE, CI, p and MDE80 are computed; (normalised): "
        "the Open "
        "LLM Leaderboard's (raw - random baseline) / (1 - random baseline) x 100, clipped at 0, a "
        "0-100 "
        "scale not comparable with raw scores; random baselines: " +
        baselines);
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

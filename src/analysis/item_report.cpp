// Item analysis across runs: the items every run shares, scored by one metric per task.
#include "lmeval/analysis/item_report.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"
#include "lmeval/analysis/comparability.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/stats/paired.hpp"

namespace lmeval::analysis {

namespace {

std::string item_text(const Item& item) {
  std::string s = py::json_dumps(item.doc);
  if (!item.target.is_null())
    s += "  [target: " +
         (item.target.is_string() ? item.target.get<std::string>() : item.target.dump()) + "]";
  if (s.size() > 400) {
    std::size_t cut = 397;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
      --cut;  // keep UTF-8 whole
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string pick_score_key(const TaskSamples& ts, const std::string& wanted,
                           const std::string& task) {
  if (wanted.empty()) {
    if (ts.score_keys.empty()) return {};
    return ts.score_keys.front();
  }
  for (const auto& k : ts.score_keys)
    if (k == wanted || k.substr(0, k.find(',')) == wanted) return k;
  std::string have;
  for (const auto& k : ts.score_keys) have += (have.empty() ? "" : ", ") + k;
  throw UserError("task " + task + " has no per-item metric '" + wanted + "'",
                  {ts.file.string(), 0, 0, "--metric"}, "one of " + have);
}

}  // namespace

Analysis analyze_runs(const std::vector<Run>& runs, const AnalyzeOptions& opt) {
  if (runs.size() < 2)
    throw UserError(
        "analyze needs two or more runs of the same tasks; got " + std::to_string(runs.size()),
        {"", 0, 0, "RUN..."}, "at least two output folders or results files");
  Analysis out;
  out.seed = opt.seed;
  out.resamples = opt.resamples;
  for (const auto& r : runs) {
    out.labels.push_back(r.label);
    out.sources.push_back(r.source);
  }
  std::vector<std::string> tasks = common_tasks(runs[0], runs[1]);
  for (std::size_t r = 2; r < runs.size(); ++r) {
    std::vector<std::string> with = common_tasks(runs[0], runs[r]), keep;
    for (const auto& t : tasks)
      if (std::find(with.begin(), with.end(), t) != with.end()) keep.push_back(t);
    if (keep.empty())
      throw UserError("the runs share no task across all of them",
                      {runs[r].results_file.string(), 0, 0, "configs"}, "runs of the same tasks");
    tasks = keep;
  }
  for (std::size_t r = 1; r < runs.size(); ++r) require_same_prompts(runs[0], runs[r], tasks);

  for (const auto& task : tasks) {
    const TaskSamples& first = runs[0].samples.at(task);
    TaskAnalysis ta;
    ta.task = task;
    ta.score_key = pick_score_key(first, opt.metric, task);
    if (ta.score_key.empty()) continue;
    // Items every run scored.
    std::vector<std::size_t> keep;
    for (std::size_t i = 0; i < first.items.size(); ++i) {
      bool all = true;
      for (const auto& run : runs) {
        const TaskSamples& ts = run.samples.at(task);
        auto it = ts.index.find(first.items[i].key);
        auto sc = ts.scores.find(ta.score_key);
        if (it == ts.index.end() || sc == ts.scores.end() || std::isnan(sc->second[it->second]))
          all = false;
      }
      if (all) keep.push_back(i);
    }
    std::vector<std::vector<double>> scores;
    for (const auto& run : runs) {
      const TaskSamples& ts = run.samples.at(task);
      std::vector<double> s;
      for (std::size_t i : keep)
        s.push_back(ts.scores.at(ta.score_key)[ts.index.at(first.items[i].key)]);
      ta.means.push_back(stats::mean(s));
      scores.push_back(std::move(s));
    }
    ta.items = keep.size();
    if (ta.items == 0) continue;
    if (auto ns = normalized_score(runs[0], task, ta.score_key); ns && ns->random_baseline) {
      ta.random_baseline = ns->random_baseline;
      for (double m : ta.means)
        ta.normalized_means.push_back(leaderboard_normalize(m, *ns->random_baseline));
    }
    ta.item_stats = stats::item_statistics(scores);
    std::vector<std::size_t> by_disc;
    for (std::size_t k = 0; k < keep.size(); ++k) {
      const Item& item = first.items[keep[k]];
      bool never = true;
      for (const auto& s : scores) never = never && s[k] <= 0;
      ListedItem li{item.key, item.doc_id, "", ta.item_stats[k].difficulty,
                    ta.item_stats[k].discrimination};
      if (never) {
        ++ta.never_correct_count;
        li.text = item_text(item);
        ta.never_correct.push_back(li);
      }
      if (!std::isnan(ta.item_stats[k].discrimination) && ta.item_stats[k].discrimination < 0)
        by_disc.push_back(k);
    }
    std::sort(by_disc.begin(), by_disc.end(), [&](std::size_t x, std::size_t y) {
      return ta.item_stats[x].discrimination < ta.item_stats[y].discrimination;
    });
    for (std::size_t k = 0; k < by_disc.size() && k < opt.listed_items; ++k) {
      const Item& item = first.items[keep[by_disc[k]]];
      ta.negative_discrimination.push_back({item.key, item.doc_id, item_text(item),
                                            ta.item_stats[by_disc[k]].difficulty,
                                            ta.item_stats[by_disc[k]].discrimination});
    }
    if (ta.items <= opt.correlation_items) {
      ta.inter_item = stats::inter_item_correlations(scores);
      ta.inter_item_items = ta.items;
    } else {
      std::vector<std::size_t> pick =
          PyRandom(opt.seed).sample_indices(ta.items, opt.correlation_items);
      std::sort(pick.begin(), pick.end());
      std::vector<std::vector<double>> sub;
      for (const auto& s : scores) {
        std::vector<double> row;
        for (std::size_t i : pick) row.push_back(s[i]);
        sub.push_back(std::move(row));
      }
      ta.inter_item = stats::inter_item_correlations(sub);
      ta.inter_item_items = pick.size();
    }
    ta.item_ranks =
        stats::rank_stability(scores, stats::draw_resamples(ta.items, opt.resamples, opt.seed));
    if (!first.cluster_key.empty()) {
      std::map<std::string, std::size_t> ids;
      std::vector<std::size_t> cluster;
      for (std::size_t i : keep)
        cluster.push_back(ids.emplace(first.items[i].cluster, ids.size()).first->second);
      ta.clusters = ids.size();
      ta.cluster_ranks = stats::clustered_rank_stability(
          scores, cluster, stats::draw_resamples(ta.clusters, opt.resamples, opt.seed));
    }
    ta.repeats = repeat_summaries(runs, task);
    out.tasks.push_back(std::move(ta));
  }
  return out;
}

namespace {
std::string f3(double v) { return format::fixed(v, 3); }

Json ranks_json(const stats::RankStability& rs, const std::vector<std::string>& labels) {
  Json arr = Json::array();
  for (std::size_t r = 0; r < rs.wins.size(); ++r)
    for (std::size_t s = r + 1; s < rs.wins.size(); ++s)
      arr.push_back({{"a", labels[r]},
                     {"b", labels[s]},
                     {"a_above_b", rs.wins[r][s]},
                     {"b_above_a", rs.wins[s][r]},
                     {"ties", rs.resamples - rs.wins[r][s] - rs.wins[s][r]}});
  return arr;
}

Json items_json(const std::vector<ListedItem>& items) {
  Json arr = Json::array();
  for (const auto& li : items)
    arr.push_back({{"doc_id", li.doc_id},
                   {"doc_hash", li.key},
                   {"difficulty", format::number(li.difficulty)},
                   {"discrimination", format::number(li.discrimination)},
                   {"text", li.text}});
  return arr;
}
}  // namespace

Json to_json(const Analysis& a) {
  Json j;
  j["runs"] = Json::array();
  for (std::size_t r = 0; r < a.labels.size(); ++r)
    j["runs"].push_back({{"label", a.labels[r]}, {"source", a.sources[r]}});
  j["seed"] = a.seed;
  j["resamples"] = a.resamples;
  j["tasks"] = Json::array();
  for (const auto& t : a.tasks) {
    Json tj;
    tj["task"] = t.task;
    tj["metric"] = t.score_key;
    tj["items"] = t.items;
    tj["means"] = Json::array();
    for (double m : t.means) tj["means"].push_back(format::number(m));
    if (t.random_baseline) {
      tj["random_baseline"] = *t.random_baseline;
      tj["normalized_means"] = Json::array();
      for (double m : t.normalized_means) tj["normalized_means"].push_back(format::number(m));
    }
    Json difficulty = Json::array(), discrimination = Json::array();
    for (const auto& s : t.item_stats) {
      difficulty.push_back(format::number(s.difficulty));
      discrimination.push_back(format::number(s.discrimination));
    }
    tj["difficulty"] = difficulty;
    tj["discrimination"] = discrimination;
    tj["never_correct_count"] = t.never_correct_count;
    tj["never_correct"] = items_json(t.never_correct);
    tj["negative_discrimination"] = items_json(t.negative_discrimination);
    const auto& c = t.inter_item;
    tj["inter_item_correlation"] = {
        {"items", t.inter_item_items},        {"pairs", c.pairs},
        {"undefined_pairs", c.undefined},     {"mean", format::number(c.mean)},
        {"min", format::number(c.min)},       {"q25", format::number(c.q25)},
        {"median", format::number(c.median)}, {"q75", format::number(c.q75)},
        {"max", format::number(c.max)},       {"histogram", c.histogram}};
    tj["rank_stability_items"] = ranks_json(t.item_ranks, a.labels);
    if (t.clusters) {
      tj["clusters"] = t.clusters;
      tj["rank_stability_clusters"] = ranks_json(t.cluster_ranks, a.labels);
    }
    if (!t.repeats.empty()) {
      tj["repeats"] = Json::array();
      for (const auto& s : t.repeats) tj["repeats"].push_back(to_json(s, a.labels));
    }
    j["tasks"].push_back(tj);
  }
  return j;
}

std::string render_text(const Analysis& a) {
  std::string out;
  for (std::size_t r = 0; r < a.labels.size(); ++r)
    out += fmt::format("run {}: {} ({})\n", r + 1, a.labels[r], a.sources[r]);
  out += fmt::format("bootstrap: {} resamples, seed {}\n", a.resamples, a.seed);
  for (const auto& t : a.tasks) {
    out += fmt::format("\n## {} ({}, {} items)\n\n", t.task, t.score_key, t.items);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t r = 0; r < a.labels.size(); ++r) {
      rows.push_back({a.labels[r], f3(t.means[r])});
      if (t.random_baseline) rows.back().push_back(format::fixed(t.normalized_means[r], 2));
    }
    if (t.random_baseline) {
      out +=
          text_table({"Run", "Score (raw)", "Normalised (leaderboard)"}, rows, {false, true, true});
      out += fmt::format(
          "Normalised (leaderboard): (raw - random baseline {}) / (1 - {}) x 100, clipped at 0; a "
          "0-100 "
          "scale, not comparable with raw scores\n",
          format::fixed(*t.random_baseline), format::fixed(*t.random_baseline));
    } else {
      out += text_table({"Run", "Score (raw)"}, rows, {false, true});
    }
    if (!t.repeats.empty()) out += "\n" + render_repeat_text(t.repeats, a.labels);
    std::size_t easy = 0, hard = 0;
    for (const auto& s : t.item_stats) {
      if (s.difficulty >= 1) ++easy;
      if (s.difficulty <= 0) ++hard;
    }
    out += fmt::format("\nItems every run gets right: {}; items no run gets right: {}\n", easy,
                       t.never_correct_count);
    const auto& c = t.inter_item;
    if (t.inter_item_items < t.items)
      out += fmt::format("Inter-item correlations over a seeded sample of {} of the {} items:\n",
                         t.inter_item_items, t.items);
    out += fmt::format(
        "Inter-item correlations: {} pairs defined ({} with a constant item): mean {}, quartiles "
        "{} / {} / {}, "
        "range [{}, {}]\n",
        c.pairs, c.undefined, f3(c.mean), f3(c.q25), f3(c.median), f3(c.q75), f3(c.min), f3(c.max));
    out += "Rank stability (share of resamples in which the ranking holds):\n";
    auto ranks = [&](const stats::RankStability& rs, const char* unit) {
      for (std::size_t r = 0; r < rs.wins.size(); ++r)
        for (std::size_t s = r + 1; s < rs.wins.size(); ++s) {
          const bool r_first = t.means[r] >= t.means[s];
          const std::size_t hi = r_first ? r : s, lo = r_first ? s : r;
          out += fmt::format("  {} > {}: {} of {} {} resamples\n", a.labels[hi], a.labels[lo],
                             rs.wins[hi][lo], rs.resamples, unit);
        }
    };
    ranks(t.item_ranks, "item");
    if (t.clusters) ranks(t.cluster_ranks, "cluster");
    if (!t.never_correct.empty()) {
      out += a.labels.size() < kItemAnalysisMinRuns
                 ? fmt::format(
                       "Items no run gets right (only {} runs, fewer than {}: mostly hard items, "
                       "not evidence of "
                       "label errors; analyse {} or more reasonable models before reading them as "
                       "such):\n",
                       a.labels.size(), kItemAnalysisMinRuns, kItemAnalysisMinRuns)
                 : std::string("Items no run gets right (candidates for label errors):\n");
      for (std::size_t k = 0; k < t.never_correct.size() && k < 10; ++k)
        out += fmt::format("  doc_id {}: {}\n", t.never_correct[k].doc_id, t.never_correct[k].text);
      if (t.never_correct.size() > 10)
        out += fmt::format("  ... and {} more (all in --output)\n", t.never_correct.size() - 10);
    }
    if (!t.negative_discrimination.empty()) {
      out += "Items with negative discrimination (better runs get them wrong more often):\n";
      for (const auto& li : t.negative_discrimination)
        out += fmt::format("  doc_id {} (r = {}): {}\n", li.doc_id, f3(li.discrimination), li.text);
    }
  }
  return out;
}

}  // namespace lmeval::analysis

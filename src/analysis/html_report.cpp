// The HTML report: plain HTML tables and inline SVG charts drawn from the runs, comparisons and
// item analysis; nothing is fetched and nothing runs in the page.
#include "lmeval/analysis/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "analysis/number_format.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval::analysis {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
const char* colour(std::size_t i) { return kPalette[i % 8]; }

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}


double num_or_nan(const Json& obj, const std::string& key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) return obj[key].get<double>();
  return std::nan("");
}

// The score keys ("acc,none") of a task's results entry, in file order.
std::vector<std::string> score_keys(const Json& entry) {
  std::vector<std::string> out;
  if (!entry.is_object()) return out;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string& k = it.key();
    std::size_t comma = k.find(',');
    if (comma == std::string::npos || !it.value().is_number()) continue;
    const std::string metric = k.substr(0, comma);
    if (metric.ends_with("_stderr") || metric.ends_with("_ci95") || metric.ends_with("_stderr_clustered")) continue;
    out.push_back(k);
  }
  return out;
}

// At most `n` code points, the middle elided, so a long label fits beside its chart.
std::string shorten(const std::string& s, std::size_t n) {
  std::vector<std::string> cps;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
    cps.push_back(s.substr(i, len));
    i += len;
  }
  if (cps.size() <= n) return s;
  std::string out;
  for (std::size_t i = 0; i < n / 2; ++i) out += cps[i];
  out += "…";
  for (std::size_t i = cps.size() - (n - n / 2 - 1); i < cps.size(); ++i) out += cps[i];
  return out;
}

struct Bar {
  std::string label, colour;
  double value = 0, low = 0, high = 0;  // low/high NaN: no interval
  double whisker_low = std::nan(""), whisker_high = std::nan("");  // seed min..max
  bool bold = false;
};

// Horizontal dot-and-interval chart; `zero` draws a reference line at 0.
std::string interval_chart(const std::vector<Bar>& bars, bool zero) {
  double lo = zero ? 0.0 : 0.0, hi = zero ? 0.0 : 1.0;
  bool unit = !zero;
  for (const auto& b : bars)
    for (double v : {b.value, b.low, b.high, b.whisker_low, b.whisker_high}) {
      if (!std::isfinite(v)) continue;
      if (unit && (v < 0 || v > 1)) unit = false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (unit) {
    lo = 0;
    hi = 1;
  }
  if (hi - lo < 1e-12) {
    lo -= 0.05;
    hi += 0.05;
  }
  const double pad = (hi - lo) * 0.05;
  if (!unit) {
    lo -= pad;
    hi += pad;
  }
  const int label_w = 190, plot_w = 420, row_h = 26, top = 8;
  const int height = top + row_h * static_cast<int>(bars.size()) + 24;
  auto x = [&](double v) { return label_w + (v - lo) / (hi - lo) * plot_w; };
  std::string s = fmt::format("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">",
                              label_w + plot_w + 70, height);
  // Axis with five ticks.
  const int axis_y = top + row_h * static_cast<int>(bars.size()) + 4;
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>", label_w, axis_y, label_w + plot_w, axis_y);
  for (int k = 0; k <= 4; ++k) {
    double v = lo + (hi - lo) * k / 4.0;
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>", x(v), top, axis_y);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{:.3g}</text>", x(v),
                     axis_y + 13, v);
  }
  if (zero) s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\" stroke-dasharray=\"3,3\"/>", x(0), top, axis_y);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = top + row_h * static_cast<int>(i) + row_h / 2;
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" fill=\"#222\"{}><title>{}</title>{}</text>",
                     label_w - 8, y + 4, b.bold ? " font-weight=\"bold\"" : "", esc(b.label), esc(shorten(b.label, 28)));
    if (std::isfinite(b.whisker_low) && std::isfinite(b.whisker_high)) {
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#888\" stroke-width=\"1\"/>", x(b.whisker_low), y + 7,
                       x(b.whisker_high), y + 7);
      for (double w : {b.whisker_low, b.whisker_high})
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#888\"/>", x(w), y + 3, y + 11);
    }
    if (std::isfinite(b.low) && std::isfinite(b.high))
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\" stroke-linecap=\"round\"/>",
                       x(b.low), y, x(b.high), y, b.colour);
    if (std::isfinite(b.value))
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{}\" r=\"5\" fill=\"{}\" stroke=\"#fff\"/>", x(b.value), y, b.colour);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333\">{}</text>", label_w + plot_w + 6, y + 4,
                     zero ? format::signed_fixed(b.value) : format::fixed(b.value));
  }
  return s + "</svg>";
}

std::string histogram_svg(const std::vector<std::size_t>& bins) {
  std::size_t top = 1;
  for (auto b : bins) top = std::max(top, b);
  const int w = 24, h = 60;
  std::string s = fmt::format("<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">", w * 10 + 40, h + 18);
  for (std::size_t i = 0; i < bins.size(); ++i) {
    double bh = static_cast<double>(bins[i]) / static_cast<double>(top) * h;
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"#6a8caf\"><title>[{:.1f}, {:.1f}): {}</title></rect>",
                     20 + w * static_cast<int>(i), h - bh, w - 2, bh, -1 + 0.2 * i, -0.8 + 0.2 * i, bins[i]);
  }
  s += fmt::format("<text x=\"20\" y=\"{}\" font-size=\"10\" fill=\"#555\">-1</text>", h + 14);
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\" text-anchor=\"middle\">0</text>", 20 + w * 5, h + 14);
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\" text-anchor=\"end\">1</text>", 20 + w * 10, h + 14);
  return s + "</svg>";
}

const char* kStyle = R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 16px}
h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f4f6f8;white-space:nowrap}p{font-size:14px}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}.sig{color:#b00020;font-weight:600}.ns{color:#555}
.note{color:#555;font-size:12px}pre{background:#f7f7f7;padding:8px;font-size:11px;overflow-x:auto;max-height:360px}
.refused{background:#fff4e5;border:1px solid #f0b46b;padding:6px 10px;font-size:13px;white-space:pre-wrap}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.swatch{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:middle}
.item{font-family:ui-monospace,monospace;font-size:11px;word-break:break-word})";

}  // namespace

ReportInput prepare_report(std::vector<Run> runs, const CompareOptions& copt, const AnalyzeOptions& aopt) {
  ReportInput in;
  in.runs = std::move(runs);
  for (std::size_t r = 1; r < in.runs.size(); ++r) {
    try {
      in.comparisons.push_back(compare_runs(in.runs[0], in.runs[r], copt));
      in.refusals.emplace_back();
    } catch (const UserError& e) {
      in.comparisons.push_back(std::nullopt);
      in.refusals.push_back(e.what());
    }
  }
  if (in.runs.size() >= 2) {
    try {
      in.analysis = analyze_runs(in.runs, aopt);
    } catch (const UserError& e) {
      in.analysis_refusal = e.what();
    }
  }
  return in;
}

std::string render_html_report(const ReportInput& in) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
                  "<title>lm-eval report</title><style>";
  h += kStyle;
  h += "</style></head><body>\n<h1>lm-eval report</h1>\n";
  h += "<p class=\"legend\">";
  for (std::size_t r = 0; r < in.runs.size(); ++r)
    h += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>", colour(r), esc(in.runs[r].label));
  h += "</p>\n<p class=\"note\">Dots are scores; thick bars their 95% intervals (the results file's <code>statistics</code> <code>_ci95</code> when "
       "present, else ±1.96·stderr); thin grey whiskers the range over few-shot seeds when seeds were run. Differences are paired "
       "over the items both runs scored (B − A against the first run).</p>\n";

  // Runs.
  h += "<h2>Runs</h2>\n<table><tr><th>#</th><th>label</th><th>model</th><th>model_args</th><th>results file</th></tr>";
  for (std::size_t r = 0; r < in.runs.size(); ++r) {
    const Json& cfg = in.runs[r].results.contains("config") ? in.runs[r].results["config"] : Json::object();
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", r + 1, esc(in.runs[r].label),
                     esc(cfg.contains("model") ? py::str(cfg["model"]) : ""), esc(cfg.contains("model_args") ? cfg["model_args"].dump() : ""),
                     esc(in.runs[r].results_file.string()));
  }
  h += "</table>\n";
  for (std::size_t r = 1; r < in.runs.size(); ++r)
    if (!in.refusals[r - 1].empty())
      h += "<div class=\"refused\">Not compared with run 1: " + esc(in.refusals[r - 1]) + "</div>\n";

  // Tasks, in the first run's order, plus tasks only later runs have.
  std::vector<std::string> tasks;
  for (const auto& run : in.runs)
    for (auto it = run.results["results"].begin(); it != run.results["results"].end(); ++it)
      if (std::find(tasks.begin(), tasks.end(), it.key()) == tasks.end()) tasks.push_back(it.key());

  for (const auto& task : tasks) {
    h += "<h2 id=\"" + esc(task) + "\">" + esc(task) + "</h2>\n";
    std::vector<std::string> keys;
    for (const auto& run : in.runs)
      if (run.results["results"].contains(task))
        for (const auto& k : score_keys(run.results["results"][task]))
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const auto& key : keys) {
      const std::string metric = key.substr(0, key.find(',')), filter = key.substr(key.find(',') + 1);
      h += "<h3>" + esc(metric) + " <span class=\"note\">(filter " + esc(filter) + ")</span></h3>\n";
      std::vector<Bar> bars;
      std::string table = "<table><tr><th>run</th><th>raw score</th><th>95% interval</th><th>stderr</th><th>seed mean ± std (min–max)</th>"
                          "<th>normalised (leaderboard, 0–100)</th></tr>";
      for (std::size_t r = 0; r < in.runs.size(); ++r) {
        const Json& res = in.runs[r].results["results"];
        if (!res.contains(task)) continue;
        const Json& e = res[task];
        Bar b;
        b.label = in.runs[r].label;
        b.colour = colour(r);
        b.value = num_or_nan(e, key);
        const double se = num_or_nan(e, metric + "_stderr," + filter);
        b.low = b.high = std::nan("");
        // The run's own interval (statistics section; older files kept it beside the score), else ±1.96·stderr.
        const std::string ci_key = metric + "_ci95," + filter;
        const Json& st = in.runs[r].results.contains("statistics") && in.runs[r].results["statistics"].contains(task)
                             ? in.runs[r].results["statistics"][task] : e;
        const Json& ci = st.contains(ci_key) ? st[ci_key] : (e.contains(ci_key) ? e[ci_key] : Json());
        if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
          b.low = ci[0].get<double>();
          b.high = ci[1].get<double>();
        } else if (std::isfinite(se)) {
          b.low = b.value - 1.959963984540054 * se;
          b.high = b.value + 1.959963984540054 * se;
        }
        std::string seeds = "–";
        const Json& fsv = in.runs[r].results.contains("fewshot_seed_variance") ? in.runs[r].results["fewshot_seed_variance"] : Json();
        if (fsv.is_object() && fsv.contains(task) && fsv[task].contains(key)) {
          const Json& sv = fsv[task][key];
          b.whisker_low = num_or_nan(sv, "min");
          b.whisker_high = num_or_nan(sv, "max");
          seeds = fmt::format("{} ± {} ({}–{}; {} seeds)", format::fixed(num_or_nan(sv, "mean")), format::fixed(num_or_nan(sv, "std")), format::fixed(b.whisker_low),
                              format::fixed(b.whisker_high), sv.contains("values") && sv["values"].is_array() ? sv["values"].size() : 0);
        }
        std::string norm = "–";
        if (auto ns = normalized_score(in.runs[r], task, key))
          norm = fmt::format("{} <span class=\"note\">(raw {}, {})</span>", format::fixed(ns->normalized, 2), format::fixed(ns->raw),
                             ns->random_baseline ? "random baseline " + format::fixed(*ns->random_baseline)
                                                 : "the leaderboard's rule: " + esc(ns->rule));
        table += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">[{}, {}]</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                             esc(b.label), format::fixed(b.value), format::fixed(b.low), format::fixed(b.high), format::fixed(se), seeds, norm);
        bars.push_back(std::move(b));
      }
      h += interval_chart(bars, false) + "\n" + table + "</table>\n";
      // Paired differences against run 1.
      std::vector<Bar> diffs;
      std::string dt = "<table><tr><th>B − A</th><th>n</th><th>raw difference</th><th>95% interval</th><th>p</th><th>test</th>"
                       "<th>MDE (80%)</th><th>verdict</th><th>normalised (leaderboard)</th></tr>";
      for (std::size_t c = 0; c < in.comparisons.size(); ++c) {
        if (!in.comparisons[c]) continue;
        for (const auto& m : in.comparisons[c]->metrics) {
          if (m.task != task || m.metric != metric || m.filter != filter) continue;
          Bar b{in.runs[c + 1].label + " − " + in.runs[0].label, colour(c + 1), m.diff, m.ci_low, m.ci_high};
          b.bold = m.significant;
          diffs.push_back(b);
          dt += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">[{}, {}] ({})</td>"
                            "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td><td class=\"num\">{}</td></tr>",
                            esc(b.label), m.n, format::signed_fixed(m.diff), format::signed_fixed(m.ci_low), format::signed_fixed(m.ci_high), esc(m.interval), format::p_value(m.p), esc(m.test), format::fixed(m.mde),
                            m.significant ? "sig" : "ns", m.significant ? "distinguishable from noise" : "within noise",
                            m.random_baseline ? fmt::format("{} <span class=\"note\">({} → {})</span>", format::signed_fixed(m.norm_diff, 2), format::fixed(m.norm_a, 2),
                                                            format::fixed(m.norm_b, 2))
                                              : std::string("–"));
        }
      }
      for (std::size_t c = 0; c < in.comparisons.size(); ++c) {
        if (!in.comparisons[c]) continue;
        for (const auto& g : in.comparisons[c]->groups) {
          if (g.group != task || g.metric != metric || g.filter != filter) continue;
          Bar b{in.runs[c + 1].label + " − " + in.runs[0].label, colour(c + 1), g.diff, g.ci_low, g.ci_high};
          b.bold = g.significant;
          diffs.push_back(b);
          dt += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">[{}, {}] (normal)</td>"
                            "<td class=\"num\">{}</td><td>size-weighted over {} tasks</td><td></td><td class=\"{}\">{}</td><td>–</td></tr>",
                            esc(b.label), g.n, format::signed_fixed(g.diff), format::signed_fixed(g.ci_low),
                            format::signed_fixed(g.ci_high), format::p_value(g.p), g.tasks.size(), g.significant ? "sig" : "ns",
                            g.significant ? "distinguishable from noise" : "within noise");
        }
      }
      if (!diffs.empty()) h += "<p class=\"note\">Paired differences:</p>" + interval_chart(diffs, true) + "\n" + dt + "</table>\n";
    }
    // Item analysis highlights.
    if (in.analysis)
      for (const auto& ta : in.analysis->tasks) {
        if (ta.task != task) continue;
        std::size_t easy = 0;
        for (const auto& s : ta.item_stats) easy += s.difficulty >= 1;
        h += fmt::format("<h3>Item analysis <span class=\"note\">({}, {} items, {} runs)</span></h3>\n", esc(ta.score_key), ta.items,
                         in.analysis->labels.size());
        h += fmt::format("<p>Items every run gets right: {}; items no run gets right: {}. Inter-item correlations over runs: {} pairs "
                         "defined, median {}, quartiles [{}, {}].</p>\n",
                         easy, ta.never_correct_count, ta.inter_item.pairs, format::fixed(ta.inter_item.median), format::fixed(ta.inter_item.q25), format::fixed(ta.inter_item.q75));
        h += histogram_svg(ta.inter_item.histogram) + "\n";
        h += fmt::format("<table><tr><th>ranking</th><th>holds in (of {} item resamples)</th>{}</tr>", ta.item_ranks.resamples,
                         ta.clusters ? fmt::format("<th>holds in (of {} cluster resamples, {} clusters)</th>", ta.cluster_ranks.resamples, ta.clusters) : "");
        for (std::size_t r = 0; r < ta.means.size(); ++r)
          for (std::size_t s = r + 1; s < ta.means.size(); ++s) {
            const std::size_t hi = ta.means[r] >= ta.means[s] ? r : s, lo = hi == r ? s : r;
            h += fmt::format("<tr><td>{} &gt; {}</td><td class=\"num\">{}</td>{}</tr>", esc(in.analysis->labels[hi]), esc(in.analysis->labels[lo]),
                             ta.item_ranks.wins[hi][lo], ta.clusters ? fmt::format("<td class=\"num\">{}</td>", ta.cluster_ranks.wins[hi][lo]) : "");
          }
        h += "</table>\n";
        if (!ta.never_correct.empty()) {
          h += "<p class=\"note\">Items no run gets right (candidates for label errors), first 5:</p><table>";
          for (std::size_t k = 0; k < ta.never_correct.size() && k < 5; ++k)
            h += fmt::format("<tr><td class=\"num\">{}</td><td class=\"item\">{}</td></tr>", ta.never_correct[k].doc_id, esc(ta.never_correct[k].text));
          h += "</table>\n";
        }
        if (!ta.negative_discrimination.empty()) {
          h += "<p class=\"note\">Most negatively discriminating items, first 5:</p><table>";
          for (std::size_t k = 0; k < ta.negative_discrimination.size() && k < 5; ++k)
            h += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">r = {}</td><td class=\"item\">{}</td></tr>",
                             ta.negative_discrimination[k].doc_id, format::fixed(ta.negative_discrimination[k].discrimination),
                             esc(ta.negative_discrimination[k].text));
          h += "</table>\n";
        }
      }
  }
  if (!in.analysis_refusal.empty()) h += "<div class=\"refused\">No item analysis: " + esc(in.analysis_refusal) + "</div>\n";

  // Exact configuration of each run.
  h += "<h2>Configuration</h2>\n";
  for (std::size_t r = 0; r < in.runs.size(); ++r) {
    Json shown = Json::object();
    for (const char* k : {"config", "model_name", "model_source", "model_dtype", "tokenizer_bos_token", "max_length", "chat_template_sha",
                          "system_instruction", "fewshot_as_multiturn", "manifest", "versions", "n-shot", "n-samples", "task_hashes",
                          "lm_eval_version", "git_hash", "date", "configs"})
      if (in.runs[r].results.contains(k)) shown[k] = in.runs[r].results[k];
    h += fmt::format("<h3>Run {}: {}</h3><pre>{}</pre>\n", r + 1, esc(in.runs[r].label), esc(py::json_dumps(shown, {.indent = 2})));
  }
  h += "<p class=\"note\">Generated by lm-eval report.</p>\n</body></html>\n";
  return h;
}

}  // namespace lmeval::analysis

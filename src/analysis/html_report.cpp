// The HTML report: plain HTML tables and inline SVG charts drawn from the runs, comparisons and
// item analysis, and the sample browser (analysis/sample_browser.hpp), the page's one script;
// nothing is fetched.
#include "lmeval/analysis/html_report.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "analysis/number_format.hpp"
#include "analysis/sample_browser.hpp"
#include "lmeval/analysis/repeat_report.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/stats/seed_variance.hpp"

namespace lmeval::analysis {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
const char* colour(std::size_t i) { return kPalette[i % 8]; }

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
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
    if (metric.ends_with("_stderr") || metric.ends_with("_ci95") ||
        metric.ends_with("_stderr_clustered"))
      continue;
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
  double value = 0, low = 0, high = 0;                             // low/high NaN: no interval
  double whisker_low = std::nan(""), whisker_high = std::nan("");  // seed min..max
  bool bold = false;
  std::string count;  // "n = 150": what the point stands on, beside its value
};

// Axis ticks at a 1, 2 or 5 × 10^k spacing over [lo, hi], labelled with just the decimals that
// spacing needs (0.2, 0.25, -0.01, never -0.0102).
struct Ticks {
  std::vector<double> at;
  int decimals = 0;
};
Ticks nice_ticks(double lo, double hi) {
  Ticks t;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double step = mag * (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10);
  t.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  if (step / std::pow(10.0, -t.decimals) - std::floor(step / std::pow(10.0, -t.decimals) + 1e-9) >
      1e-6)
    ++t.decimals;  // 2.5 × 10^k
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k += 1)
    t.at.push_back(k == 0 ? 0.0 : k * step);
  return t;
}

// Horizontal dot-and-interval chart; `zero` draws a reference line at 0, `chance` a labelled
// dashed line at the task's random baseline.
std::string interval_chart(const std::vector<Bar>& bars, bool zero, const std::string& axis_title,
                           std::optional<double> chance = std::nullopt) {
  // Both kinds of chart keep 0 on the axis (the reference line of differences, the floor of
  // scores); a score chart also starts from [0, 1], the range of most scores, and widens to
  // scores outside it.
  double lo = 0.0, hi = zero ? 0.0 : 1.0;
  bool unit = !zero;
  for (const auto& b : bars)
    for (double v : {b.value, b.low, b.high, b.whisker_low, b.whisker_high}) {
      if (!std::isfinite(v)) continue;
      if (unit && (v < 0 || v > 1)) unit = false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (chance && std::isfinite(*chance)) {
    lo = std::min(lo, *chance);
    hi = std::max(hi, *chance);
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
  // The label column is as wide as the longest label needs (about 7 px a character at 12 px),
  // within bounds; only labels longer than that are elided, in the middle.
  std::size_t longest = 0;
  for (const auto& b : bars) {
    std::size_t cps = 0;
    for (unsigned char c : b.label) cps += (c & 0xC0) != 0x80;
    longest = std::max(longest, cps);
  }
  const int label_w = std::clamp(16 + 7 * static_cast<int>(longest), 120, 400);
  const std::size_t label_chars = static_cast<std::size_t>((label_w - 16) / 7);
  const int plot_w = 420, row_h = 26, top = 18, value_w = 150;
  const int height = top + row_h * static_cast<int>(bars.size()) + 40;
  auto x = [&](double v) { return label_w + (v - lo) / (hi - lo) * plot_w; };
  std::string s = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\">",
      label_w + plot_w + value_w, height);
  const int axis_y = top + row_h * static_cast<int>(bars.size()) + 4;
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>", label_w,
                   axis_y, label_w + plot_w, axis_y);
  const Ticks ticks = nice_ticks(lo, hi);
  for (double v : ticks.at) {
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>",
                     x(v), top, axis_y);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" "
        "fill=\"#555\">{:.{}f}</text>",
        x(v), axis_y + 13, v, ticks.decimals);
  }
  s += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" "
      "fill=\"#333\">{}</text>",
      label_w + plot_w / 2, axis_y + 30, esc(axis_title));
  if (zero)
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\" "
        "stroke-dasharray=\"3,3\"/>",
        x(0), top, axis_y);
  if (chance && std::isfinite(*chance))
    s += fmt::format(
        "<line class=\"chance\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
        "stroke=\"#c77c00\" stroke-dasharray=\"5,3\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"10\" text-anchor=\"middle\" "
        "fill=\"#c77c00\">chance {4:.{5}f}</text>",
        x(*chance), top - 4, axis_y, top - 7, *chance, std::max(2, ticks.decimals));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = top + row_h * static_cast<int>(i) + row_h / 2;
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" "
        "fill=\"#222\"{}><title>{}</title>{}</text>",
        label_w - 8, y + 4, b.bold ? " font-weight=\"bold\"" : "", esc(b.label),
        esc(shorten(b.label, label_chars)));
    if (std::isfinite(b.whisker_low) && std::isfinite(b.whisker_high)) {
      s += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#888\" "
          "stroke-width=\"1\"/>",
          x(b.whisker_low), y + 7, x(b.whisker_high), y + 7);
      for (double w : {b.whisker_low, b.whisker_high})
        s += fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#888\"/>", x(w),
            y + 3, y + 11);
    }
    if (std::isfinite(b.low) && std::isfinite(b.high))
      s += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\" "
          "stroke-linecap=\"round\"/>",
          x(b.low), y, x(b.high), y, b.colour);
    if (std::isfinite(b.value))
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{}\" r=\"5\" fill=\"{}\" stroke=\"#fff\"/>",
                       x(b.value), y, b.colour);
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333\">{}<tspan "
        "fill=\"#666\">{}</tspan></text>",
        label_w + plot_w + 6, y + 4, zero ? format::signed_fixed(b.value) : format::fixed(b.value),
        b.count.empty() ? "" : "  " + esc(b.count));
  }
  return s + "</svg>";
}

// The inter-item correlations' histogram: ten bins over [-1, 1], counts on the bars and on the
// y axis, both axes titled.
std::string histogram_svg(const std::vector<std::size_t>& bins) {
  std::size_t most = 1;
  for (auto b : bins) most = std::max(most, b);
  const int w = 32, h = 110, left = 52, top = 16, n = static_cast<int>(bins.size());
  const int axis_y = top + h;
  std::string s = fmt::format(
      "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\">",
      left + w * n + 24, axis_y + 44);
  s += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#999\"/>",
      left, top, axis_y, left + w * n);
  for (std::size_t v : {std::size_t{0}, (most + 1) / 2, most}) {
    const double y = axis_y - static_cast<double>(v) / static_cast<double>(most) * h;
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#999\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"end\" "
        "fill=\"#555\">{5}</text>",
        left - 4, y, left, left - 6, y + 3.5, v);
  }
  for (int i = 0; i < n; ++i) {
    const auto c = bins[static_cast<std::size_t>(i)];
    const double bh = static_cast<double>(c) / static_cast<double>(most) * h;
    const double lo = -1 + 2.0 * i / n, hi = -1 + 2.0 * (i + 1) / n;
    s += fmt::format(
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" "
        "fill=\"#6a8caf\"><title>[{:.1f}, {:.1f}): {} pairs</title></rect>",
        left + w * i + 1, axis_y - bh, w - 2, bh, lo, hi, c);
    if (c > 0)
      s += fmt::format(
          "<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"middle\" "
          "fill=\"#333\">{}</text>",
          left + w * i + w / 2, axis_y - bh - 3, c);
  }
  for (int k = 0; k <= 4; ++k)
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" "
        "fill=\"#555\">{}</text>",
        left + w * n * k / 4, axis_y + 13, k == 2 ? "0" : fmt::format("{:.1f}", -1 + 0.5 * k));
  s += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" "
      "fill=\"#333\">inter-item correlation over runs (r)</text>"
      "<text class=\"axis-title\" x=\"12\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" "
      "fill=\"#333\" transform=\"rotate(-90 12 {})\">item pairs</text>",
      left + w * n / 2, axis_y + 32, top + h / 2, top + h / 2);
  return s + "</svg>";
}

const char* kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 16px}
h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word;hyphens:none}th{background:#f4f6f8;white-space:nowrap}p{font-size:14px}
td.num{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}.sig{color:#b00020;font-weight:600}.ns{color:#555}
.note{color:#555;font-size:12px}pre{background:#f7f7f7;padding:8px;font-size:11px;overflow-x:auto;max-height:360px}
.refused{background:#fff4e5;border:1px solid #f0b46b;padding:6px 10px;font-size:13px;white-space:pre-wrap}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.swatch{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:middle}
.item{font-family:ui-monospace,monospace;font-size:11px;overflow-wrap:break-word}
table.summary td.best{font-weight:700;background:#eef6ee}.chance-note{color:#8a5a00}
.caveat{background:#f4f6f8;border-left:3px solid #999;padding:4px 10px;font-size:13px}
table{max-width:100%}svg.chart{max-width:100%;height:auto})";

// A run's score as compare pairs it: with --fewshot_seeds the mean over the seeds (interval from
// the total SE over items and seeds where the samples give every seed), else the run's own score
// and interval. `basis` says which.
struct RunScore {
  double value = std::nan(""), low = std::nan(""), high = std::nan(""), se = std::nan("");
  std::string basis = "one few-shot seed";
  std::string interval = "–";
};
RunScore score_of(const Run& run, const std::string& task, const std::string& key) {
  RunScore r;
  const Json& res = run.results["results"];
  if (!res.contains(task)) return r;
  const Json& e = res[task];
  const std::string metric = key.substr(0, key.find(',')), filter = key.substr(key.find(',') + 1);
  const Json& fsv =
      run.results.contains("fewshot_seed_variance") ? run.results["fewshot_seed_variance"] : Json();
  if (fsv.is_object() && fsv.contains(task) && fsv[task].contains(key) &&
      fsv[task][key].contains("values") && fsv[task][key]["values"].size() >= 2) {
    const Json& sv = fsv[task][key];
    r.value = num_or_nan(sv, "mean");
    r.basis = fmt::format("mean of {} few-shot seeds", sv["values"].size());
    auto ts = run.samples.find(task);
    if (ts != run.samples.end() && ts->second.seed_scores.count(key)) {
      const auto& x = ts->second.seed_scores.at(key);
      std::vector<std::vector<double>> complete(x.size());
      for (std::size_t i = 0; i < (x.empty() ? 0 : x[0].size()); ++i) {
        bool all = true;
        for (const auto& row : x) all = all && !std::isnan(row[i]);
        if (all)
          for (std::size_t k = 0; k < x.size(); ++k) complete[k].push_back(x[k][i]);
      }
      const auto st = stats::seed_item_stderr(complete);
      if (st.total > 0) {
        r.se = st.total;
        r.low = r.value - 1.959963984540054 * st.total;
        r.high = r.value + 1.959963984540054 * st.total;
        r.interval = "items and seeds";
      }
    }
    return r;
  }
  r.value = num_or_nan(e, key);
  r.se = num_or_nan(e, metric + "_stderr," + filter);
  // The run's own interval (statistics section; older files kept it beside the score), else
  // ±1.96·stderr.
  const std::string ci_key = metric + "_ci95," + filter;
  const Json& st = run.results.contains("statistics") && run.results["statistics"].contains(task)
                       ? run.results["statistics"][task]
                       : e;
  const Json& ci = st.contains(ci_key) ? st[ci_key] : (e.contains(ci_key) ? e[ci_key] : Json());
  if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()) {
    r.low = ci[0].get<double>();
    r.high = ci[1].get<double>();
    const std::string mk = metric + "_ci95_method," + filter;
    r.interval = st.contains(mk) && st[mk].is_string() ? st[mk].get<std::string>() : "results file";
  } else if (std::isfinite(r.se) && r.se > 0) {
    r.low = r.value - 1.959963984540054 * r.se;
    r.high = r.value + 1.959963984540054 * r.se;
    r.interval = "±1.96·stderr";
  }
  return r;
}

bool higher_is_better_of(const Run& run, const std::string& task, const std::string& metric) {
  const Json& h =
      run.results.contains("higher_is_better") ? run.results["higher_is_better"] : Json();
  if (h.is_object() && h.contains(task) && h[task].contains(metric) && h[task][metric].is_boolean())
    return h[task][metric].get<bool>();
  return true;
}

std::optional<double> chance_of(const std::vector<Run>& runs, const std::string& task,
                                const std::string& key) {
  for (const auto& run : runs)
    if (auto ns = normalized_score(run, task, key); ns && ns->random_baseline)
      return ns->random_baseline;
  return std::nullopt;
}

// The paired comparison of runs i and j (any order) on one row, from run min(i, j)'s side.
const MetricComparison* pair_row(const ReportInput& in, std::size_t i, std::size_t j,
                                 const std::string& task, const std::string& key) {
  const std::size_t a = std::min(i, j), b = std::max(i, j);
  if (a >= in.pairs.size() || !in.pairs[a][b]) return nullptr;
  for (const auto& m : in.pairs[a][b]->metrics)
    if (m.task == task && m.metric + "," + m.filter == key) return &m;
  return nullptr;
}

}  // namespace

ReportInput prepare_report(std::vector<Run> runs, const CompareOptions& copt,
                           const AnalyzeOptions& aopt) {
  ReportInput in;
  in.runs = std::move(runs);
  for (std::size_t r = 1; r < in.runs.size(); ++r) {
    try {
      in.comparisons.emplace_back(compare_runs(in.runs[0], in.runs[r], copt));
      in.refusals.emplace_back();
    } catch (const UserError& e) {
      in.comparisons.emplace_back(std::nullopt);
      in.refusals.emplace_back(e.what());
    }
  }
  in.pairs.assign(in.runs.size(), std::vector<std::optional<Comparison>>(in.runs.size()));
  for (std::size_t i = 0; i < in.runs.size(); ++i)
    for (std::size_t j = i + 1; j < in.runs.size(); ++j) {
      if (i == 0) {
        in.pairs[i][j] = in.comparisons[j - 1];
        continue;
      }
      try {
        in.pairs[i][j] = compare_runs(in.runs[i], in.runs[j], copt);
      } catch (const UserError&) {
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
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<title>lm-eval report</title><style>";
  h += kStyle;
  h += "</style></head><body>\n<h1>lm-eval report</h1>\n";
  h += "<p class=\"legend\">";
  for (std::size_t r = 0; r < in.runs.size(); ++r)
    h += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
                     colour(r), esc(in.runs[r].label));
  h += "</p>\n<p class=\"note\">Dots are scores; thick bars their 95% intervals (the results "
       "file's <code>statistics</code> <code>_ci95</code> when "
       "present, else ±1.96·stderr); thin grey whiskers the range over few-shot seeds when seeds "
       "were run. Differences are paired "
       "over the items both runs scored (B − A against the first run).</p>\n";

  // Runs.
  h += "<h2>Runs</h2>\n<table><tr><th>#</th><th>label</th><th>model</th><th>model_args</"
       "th><th>results file</th></tr>";
  for (std::size_t r = 0; r < in.runs.size(); ++r) {
    const Json& cfg =
        in.runs[r].results.contains("config") ? in.runs[r].results["config"] : Json::object();
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", r + 1,
                     esc(in.runs[r].label), esc(cfg.contains("model") ? py::str(cfg["model"]) : ""),
                     esc(cfg.contains("model_args") ? cfg["model_args"].dump() : ""),
                     esc(in.runs[r].results_file.string()));
  }
  h += "</table>\n";
  for (std::size_t r = 1; r < in.runs.size(); ++r)
    if (!in.refusals[r - 1].empty())
      h +=
          "<div class=\"refused\">Not compared with run 1: " + esc(in.refusals[r - 1]) + "</div>\n";

  // Tasks, in the first run's order, plus tasks only later runs have.
  std::vector<std::string> tasks;
  for (const auto& run : in.runs)
    for (auto it = run.results["results"].begin(); it != run.results["results"].end(); ++it)
      if (std::find(tasks.begin(), tasks.end(), it.key()) == tasks.end()) tasks.push_back(it.key());

  // Summary: every run's score per task on its first metric; the best run marked only where it is
  // distinguishable (p < 0.05, paired) from every other run and above chance.
  h += "<h2 id=\"summary\">Summary</h2>\n<table "
       "class=\"summary\"><tr><th>task</th><th>metric</th><th>chance</th>";
  for (const auto& run : in.runs) h += "<th>" + esc(run.label) + "</th>";
  h += "<th>best</th></tr>";
  bool any_seed_mean = false;
  for (const auto& task : tasks) {
    std::string key;
    for (const auto& run : in.runs)
      if (key.empty() && run.results["results"].contains(task)) {
        auto keys = score_keys(run.results["results"][task]);
        if (!keys.empty()) key = keys.front();
      }
    if (key.empty()) continue;
    const std::string metric = key.substr(0, key.find(','));
    const auto chance = chance_of(in.runs, task, key);
    const bool hib = higher_is_better_of(in.runs[0], task, metric);
    std::vector<RunScore> sc;
    std::optional<std::size_t> best;
    for (std::size_t r = 0; r < in.runs.size(); ++r) {
      sc.push_back(score_of(in.runs[r], task, key));
      any_seed_mean = any_seed_mean || sc.back().basis != "one few-shot seed";
      if (std::isfinite(sc.back().value) &&
          (!best || (hib ? sc.back().value > sc[*best].value : sc.back().value < sc[*best].value)))
        best = r;
    }
    std::string verdict = "–";
    bool marked = false;
    if (best && in.runs.size() >= 2) {
      bool all = true;
      for (std::size_t r = 0; r < in.runs.size() && all; ++r) {
        if (r == *best) continue;
        const MetricComparison* m = pair_row(in, *best, r, task, key);
        all = m && m->significant && (m->diff > 0) == ((r > *best) != hib);
      }
      const bool above_chance =
          !chance || (hib ? sc[*best].value > *chance : sc[*best].value < *chance);
      marked = all && above_chance;
      verdict = marked ? esc(in.runs[*best].label)
                : all  ? "<span class=\"chance-note\">" + esc(in.runs[*best].label) +
                            " highest, but at or below chance</span>"
                      : "<span class=\"ns\">not distinguishable</span>";
    }
    h += "<tr><td>" + esc(task) + "</td><td>" + esc(key) + "</td><td class=\"num\">" +
         (chance ? format::fixed(*chance) : "–") + "</td>";
    for (std::size_t r = 0; r < sc.size(); ++r)
      h += fmt::format("<td class=\"num{}\">{}{}</td>", marked && r == *best ? " best" : "",
                       format::fixed(sc[r].value),
                       sc[r].basis != "one few-shot seed" ? "<sup>s</sup>" : "");
    h += "<td>" + verdict + "</td></tr>";
  }
  h += "</table>\n<p class=\"note\">Each task's first metric; the best run is marked only where a "
       "paired test finds it better "
       "than every other run (p &lt; 0.05) and it is above chance (the random baseline, where the "
       "task has one).";
  if (any_seed_mean)
    h += " <sup>s</sup>: the mean over the run's few-shot seeds (what compare pairs), not one "
         "seed's score.";
  h += "</p>\n";

  for (const auto& task : tasks) {
    h += "<h2 id=\"" + esc(task) + "\">" + esc(task) + "</h2>\n";
    std::vector<std::string> keys;
    for (const auto& run : in.runs)
      if (run.results["results"].contains(task))
        for (const auto& k : score_keys(run.results["results"][task]))
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const auto& key : keys) {
      const std::string metric = key.substr(0, key.find(',')),
                        filter = key.substr(key.find(',') + 1);
      h +=
          "<h3>" + esc(metric) + " <span class=\"note\">(filter " + esc(filter) + ")</span></h3>\n";
      std::vector<Bar> bars;
      const auto chance = chance_of(in.runs, task, key);
      std::string table =
          "<table><tr><th>run</th><th>raw score</th><th>score of</th><th>95% "
          "interval</th><th>stderr</th>"
          "<th>seed mean ± std (min–max)</th><th>normalised (leaderboard, 0–100)</th></tr>";
      for (std::size_t r = 0; r < in.runs.size(); ++r) {
        const Json& res = in.runs[r].results["results"];
        if (!res.contains(task)) continue;
        const RunScore rs = score_of(in.runs[r], task, key);
        Bar b;
        b.label = in.runs[r].label;
        b.colour = colour(r);
        const Json& ns =
            in.runs[r].results.contains("n-samples") ? in.runs[r].results["n-samples"] : Json();
        if (ns.is_object() && ns.contains(task) && ns[task].contains("effective"))
          b.count = "n = " + ns[task]["effective"].dump();
        b.value = rs.value;
        b.low = rs.low;
        b.high = rs.high;
        std::string seeds = "–";
        const Json& fsv = in.runs[r].results.contains("fewshot_seed_variance")
                              ? in.runs[r].results["fewshot_seed_variance"]
                              : Json();
        if (fsv.is_object() && fsv.contains(task) && fsv[task].contains(key)) {
          const Json& sv = fsv[task][key];
          b.whisker_low = num_or_nan(sv, "min");
          b.whisker_high = num_or_nan(sv, "max");
          seeds = fmt::format(
              "{} ± {} ({}–{}; {} seeds)", format::fixed(num_or_nan(sv, "mean")),
              format::fixed(num_or_nan(sv, "std")), format::fixed(b.whisker_low),
              format::fixed(b.whisker_high),
              sv.contains("values") && sv["values"].is_array() ? sv["values"].size() : 0);
        }
        std::string norm = "–";
        if (auto ns = normalized_score(in.runs[r], task, key)) {
          // The same score as the raw column: a seed mean is normalised itself, not the first
          // seed's score.
          if (ns->random_baseline && rs.basis != "one few-shot seed") {
            ns->raw = rs.value;
            ns->normalized = leaderboard_normalize(rs.value, *ns->random_baseline);
          }
          norm = fmt::format("{} <span class=\"note\">(raw {}, {})</span>",
                             format::fixed(ns->normalized, 2), format::fixed(ns->raw),
                             ns->random_baseline
                                 ? "random baseline " + format::fixed(*ns->random_baseline)
                                 : "the leaderboard's rule: " + esc(ns->rule));
        }
        const std::string interval =
            std::isfinite(b.low)
                ? fmt::format("[{}, {}] <span class=\"note\">({})</span>", format::fixed(b.low),
                              format::fixed(b.high), esc(rs.interval))
                : "–";
        table += fmt::format(
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(b.label), format::fixed(b.value), esc(rs.basis), interval, format::fixed(rs.se),
            seeds, norm);
        bars.push_back(std::move(b));
      }
      h += interval_chart(bars, false, metric + " (" + filter + "), 95% interval", chance) + "\n" +
           table + "</table>\n";
      // Paired differences against run 1.
      std::vector<Bar> diffs;
      std::string dt =
          "<table><tr><th>B − A</th><th>n</th><th>raw difference</th><th>95% "
          "interval</th><th>p</th><th>test</th>"
          "<th>MDE (80%)</th><th>verdict</th><th>normalised (leaderboard)</th></tr>";
      for (std::size_t c = 0; c < in.comparisons.size(); ++c) {
        if (!in.comparisons[c]) continue;
        for (const auto& m : in.comparisons[c]->metrics) {
          if (m.task != task || m.metric != metric || m.filter != filter) continue;
          Bar b{in.runs[c + 1].label + " − " + in.runs[0].label, colour(c + 1), m.diff, m.ci_low,
                m.ci_high};
          // A difference between two runs both at or below chance says nothing about either model.
          const bool below_chance =
              chance && (m.higher_is_better ? std::max(m.score_a, m.score_b) <= *chance
                                            : std::min(m.score_a, m.score_b) >= *chance);
          b.bold = m.significant && !below_chance;
          b.count = fmt::format("n = {}", m.n);
          diffs.push_back(b);
          auto why = [&](const char* k) {
            return m.undefined.count(k)
                       ? " <span class=\"note\">(" + esc(m.undefined.at(k)) + ")</span>"
                       : std::string();
          };
          const std::string ci =
              std::isnan(m.ci_low) ? "undefined" + why("ci95")
                                   : fmt::format("[{}, {}] ({})", format::signed_fixed(m.ci_low),
                                                 format::signed_fixed(m.ci_high), esc(m.interval));
          const std::string verdict =
              std::isnan(m.p)  ? "undefined" + why("p_value")
              : !m.significant ? "within noise"
              : below_chance   ? "distinguishable from noise, but both runs are at or below chance"
                               : "distinguishable from noise";
          dt += fmt::format(
              "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
              "class=\"num\">{}</td>"
              "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
              "class=\"{}\">{}</td><td class=\"num\">{}</td></tr>",
              esc(b.label), m.n, format::signed_fixed(m.diff), ci, format::p_value(m.p),
              esc(m.test), format::fixed(m.mde) + why("mde80"), b.bold ? "sig" : "ns", verdict,
              m.random_baseline
                  ? fmt::format("{} <span class=\"note\">({} → {})</span>",
                                format::signed_fixed(m.norm_diff, 2), format::fixed(m.norm_a, 2),
                                format::fixed(m.norm_b, 2))
                  : std::string("–"));
        }
      }
      for (std::size_t c = 0; c < in.comparisons.size(); ++c) {
        if (!in.comparisons[c]) continue;
        for (const auto& g : in.comparisons[c]->groups) {
          if (g.group != task || g.metric != metric || g.filter != filter) continue;
          Bar b{in.runs[c + 1].label + " − " + in.runs[0].label, colour(c + 1), g.diff, g.ci_low,
                g.ci_high};
          b.bold = g.significant && !chance;
          b.count = fmt::format("n = {}", g.n);
          diffs.push_back(b);
          dt += fmt::format(
              "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
              "class=\"num\">[{}, {}] (normal)</td>"
              "<td class=\"num\">{}</td><td>size-weighted over {} tasks</td><td></td><td "
              "class=\"{}\">{}</td><td>–</td></tr>",
              esc(b.label), g.n, format::signed_fixed(g.diff), format::signed_fixed(g.ci_low),
              format::signed_fixed(g.ci_high), format::p_value(g.p), g.tasks.size(),
              g.significant ? "sig" : "ns",
              g.significant ? "distinguishable from noise" : "within noise");
        }
      }
      if (!diffs.empty())
        h += "<p class=\"note\">Paired differences:</p>" +
             interval_chart(diffs, true, "difference in " + metric + " (B − A), 95% interval") +
             "\n" + dt + "</table>\n";
    }
    // Sampled answers (repeats > 1): between- and within-question variance, per run.
    if (const auto reps = repeat_summaries(in.runs, task); !reps.empty()) {
      h += "<h3>Sampled answers <span class=\"note\">(repeats; each answer scored alone, a "
           "question's score the mean of its K "
           "answers; Var(mean) = (between + within/K) / n, Miller 2024)</span></h3>\n<p "
           "class=\"note\">between: the variance of the "
           "questions' expected scores; within: the variance of one answer's score around its "
           "question's; SE at 2K and at K = ∞: "
           "the same questions with twice and with infinitely many answers "
           "each.</p>\n<table><tr><th>run</th><th>metric</th>"
           "<th>K</th><th>n</th><th>mean</th><th>between</th><th>within</th><th>SE</th><th>SE at "
           "2K</th><th>SE at K = ∞</th></tr>";
      std::string advice;
      for (const auto& s : reps) {
        const auto& v = s.v;
        h += fmt::format(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td>"
            "<td class=\"num\">{}</td></tr>",
            esc(in.runs[s.run].label), esc(s.key), v.k, v.n, format::fixed(v.mean),
            format::fixed(v.between, 6), format::fixed(v.within, 6), format::fixed(v.se),
            format::fixed(v.se_with(2.0 * static_cast<double>(v.k))),
            format::fixed(v.se_with(std::numeric_limits<double>::infinity())));
        advice += "<li>" + esc(in.runs[s.run].label) + " " + esc(s.key) + ": " +
                  esc(repeat_advice(v)) + "</li>";
      }
      h += "</table>\n<ul class=\"note\">" + advice + "</ul>\n";
    }
    // Item analysis highlights.
    if (in.analysis)
      for (const auto& ta : in.analysis->tasks) {
        if (ta.task != task) continue;
        std::size_t easy = 0;
        for (const auto& s : ta.item_stats) easy += s.difficulty >= 1;
        h += fmt::format(
            "<h3>Item analysis <span class=\"note\">({}, {} items, {} runs)</span></h3>\n",
            esc(ta.score_key), ta.items, in.analysis->labels.size());
        h += fmt::format(
            "<p>Items every run gets right: {}; items no run gets right: {}. Inter-item "
            "correlations over runs: {} pairs "
            "defined, median {}, quartiles [{}, {}].</p>\n",
            easy, ta.never_correct_count, ta.inter_item.pairs, format::fixed(ta.inter_item.median),
            format::fixed(ta.inter_item.q25), format::fixed(ta.inter_item.q75));
        if (in.analysis->labels.size() < kItemAnalysisMinRuns)
          h += fmt::format(
              "<p class=\"caveat\">Only {} runs (fewer than {}): an item's discrimination is a "
              "correlation over {} "
              "points, and an item no run gets right is mostly just a hard item, not evidence of a "
              "label error. "
              "Read what follows as anecdotes; analyse {} or more reasonable models before acting "
              "on it.</p>\n",
              in.analysis->labels.size(), kItemAnalysisMinRuns, in.analysis->labels.size(),
              kItemAnalysisMinRuns);
        h += histogram_svg(ta.inter_item.histogram) + "\n";
        h += fmt::format(
            "<table><tr><th>ranking</th><th>holds in (of {} item resamples)</th>{}</tr>",
            ta.item_ranks.resamples,
            ta.clusters ? fmt::format("<th>holds in (of {} cluster resamples, {} clusters)</th>",
                                      ta.cluster_ranks.resamples, ta.clusters)
                        : "");
        for (std::size_t r = 0; r < ta.means.size(); ++r)
          for (std::size_t s = r + 1; s < ta.means.size(); ++s) {
            const std::size_t hi = ta.means[r] >= ta.means[s] ? r : s, lo = hi == r ? s : r;
            h += fmt::format("<tr><td>{} &gt; {}</td><td class=\"num\">{}</td>{}</tr>",
                             esc(in.analysis->labels[hi]), esc(in.analysis->labels[lo]),
                             ta.item_ranks.wins[hi][lo],
                             ta.clusters ? fmt::format("<td class=\"num\">{}</td>",
                                                       ta.cluster_ranks.wins[hi][lo])
                                         : "");
          }
        h += "</table>\n";
        if (!ta.never_correct.empty()) {
          h += in.analysis->labels.size() < kItemAnalysisMinRuns
                   ? "<p class=\"note\">Items no run gets right (with this few runs, not "
                     "label-error candidates), first 5:</p><table>"
                   : "<p class=\"note\">Items no run gets right (candidates for label errors), "
                     "first 5:</p><table>";
          for (std::size_t k = 0; k < ta.never_correct.size() && k < 5; ++k)
            h += fmt::format("<tr><td class=\"num\">{}</td><td class=\"item\">{}</td></tr>",
                             ta.never_correct[k].doc_id, esc(ta.never_correct[k].text));
          h += "</table>\n";
        }
        if (!ta.negative_discrimination.empty()) {
          h += "<p class=\"note\">Most negatively discriminating items, first 5:</p><table>";
          for (std::size_t k = 0; k < ta.negative_discrimination.size() && k < 5; ++k)
            h += fmt::format(
                "<tr><td class=\"num\">{}</td><td class=\"num\">r = {}</td><td "
                "class=\"item\">{}</td></tr>",
                ta.negative_discrimination[k].doc_id,
                format::fixed(ta.negative_discrimination[k].discrimination),
                esc(ta.negative_discrimination[k].text));
          h += "</table>\n";
        }
      }
  }
  if (!in.analysis_refusal.empty())
    h += "<div class=\"refused\">No item analysis: " + esc(in.analysis_refusal) + "</div>\n";

  h += sample_browser_section(in.runs);

  // Exact configuration of each run.
  h += "<h2>Configuration</h2>\n";
  for (std::size_t r = 0; r < in.runs.size(); ++r) {
    Json shown = Json::object();
    for (const char* k :
         {"config", "model_name", "model_source", "model_dtype", "tokenizer_bos_token",
          "max_length", "chat_template_sha", "system_instruction", "fewshot_as_multiturn",
          "manifest", "versions", "n-shot", "n-samples", "task_hashes", "lm_eval_version",
          "git_hash", "date", "configs"})
      if (in.runs[r].results.contains(k)) shown[k] = in.runs[r].results[k];
    h += fmt::format("<h3>Run {}: {}</h3><pre>{}</pre>\n", r + 1, esc(in.runs[r].label),
                     esc(py::json_dumps(shown, {.indent = 2})));
  }
  h += "<p class=\"note\">Generated by lm-eval report.</p>\n</body></html>\n";
  return h;
}

}  // namespace lmeval::analysis

// The console tables: make_table of lm_eval/utils.py rendered as pytablewriter 1.2.1 Markdown.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval {

namespace {

enum class Kind { Null, Integer, Real, String };

struct Cell {
  Kind kind = Kind::String;
  std::string text;  // for strings
  double number = 0;
};

bool parse_number(const std::string& raw, double& out) {
  std::string s(unicode::py_strip(raw));
  if (s.empty()) return false;
  std::string l = s;
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "nan" || l == "inf" || l == "-inf" || l == "+inf" || l == "infinity" ||
      l == "-infinity") {
    out = l == "nan" ? NAN : (l[0] == '-' ? -INFINITY : INFINITY);
    return true;
  }
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

Cell detect(const Json& v) {
  Cell c;
  if (v.is_null()) {
    c.kind = Kind::Null;
    return c;
  }
  if (v.is_number()) {
    c.number = v.get<double>();
    c.kind =
        (std::isfinite(c.number) && c.number == std::floor(c.number)) ? Kind::Integer : Kind::Real;
    return c;
  }
  std::string s = v.is_string() ? v.get<std::string>() : py::str(v);
  c.text = s;
  if (unicode::py_strip(s).empty()) {
    c.kind = Kind::Null;
    return c;
  }
  double d;
  if (parse_number(s, d)) {
    c.number = d;
    c.kind = (std::isfinite(d) && d == std::floor(d)) ? Kind::Integer : Kind::Real;
    return c;
  }
  c.kind = Kind::String;
  return c;
}

bool strictly(const Json& v, Kind hint) {
  switch (hint) {
    case Kind::String:
      return v.is_string();
    case Kind::Integer:
      return v.is_number_integer();
    case Kind::Real:
      return v.is_number_float();
    case Kind::Null:
      return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty());
  }
  return false;
}

int decimals_of(double v) {
  if (!std::isfinite(v) || v == std::floor(v)) return 0;
  std::string s = py::float_repr(std::fabs(v));
  auto e = s.find('e');
  if (e != std::string::npos) return std::abs(std::stoi(s.substr(e + 1)));
  auto dot = s.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
}

std::string format_number(double v, int decimals) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

size_t display_width(const std::string& s) {
  // ASCII (nearly every cell): one column per byte.
  if (std::all_of(s.begin(), s.end(),
                  [](char ch) { return static_cast<unsigned char>(ch) < 0x80; }))
    return s.size();
  size_t w = 0;
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view) {
    // East Asian Wide/Fullwidth ranges.
    bool wide = (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) ||
                (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
                (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
                (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
                (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd);
    w += wide ? 2 : 1;
  });
  return w;
}

std::string pad_left(const std::string& s, size_t w) {
  size_t dw = display_width(s);
  return dw >= w ? s : std::string(w - dw, ' ') + s;
}
std::string pad_right(const std::string& s, size_t w) {
  size_t dw = display_width(s);
  return dw >= w ? s : s + std::string(w - dw, ' ');
}

}  // namespace

std::string markdown_table(const std::vector<std::string>& headers,
                           const std::vector<std::vector<Json>>& rows) {
  size_t ncol = headers.size();
  std::vector<std::vector<Cell>> cells(rows.size(), std::vector<Cell>(ncol));
  std::vector<Kind> col_kind(ncol);
  std::vector<int> col_dec(ncol, 0);
  for (size_t c = 0; c < ncol; ++c) {
    std::map<Kind, int> counts;
    std::vector<Kind> first_seen;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Json& v = rows[r][c];
      Cell cell;
      if (!first_seen.empty()) {
        Kind hint = first_seen[0];
        int best = -1;
        for (Kind k : first_seen)
          if (counts[k] > best) {
            best = counts[k];
            hint = k;
          }
        if (strictly(v, hint)) {
          cell.kind = hint;
          if (v.is_string()) cell.text = v.get<std::string>();
          if (v.is_number()) cell.number = v.get<double>();
        } else {
          cell = detect(v);
        }
      } else {
        cell = detect(v);
      }
      if (!counts.count(cell.kind)) first_seen.push_back(cell.kind);
      counts[cell.kind]++;
      cells[r][c] = cell;
    }
    bool any_string = false, any_real = false, any_nonnull = false;
    for (size_t r = 0; r < rows.size(); ++r) {
      Kind k = cells[r][c].kind;
      if (k == Kind::Null) continue;
      any_nonnull = true;
      if (k == Kind::String) any_string = true;
      if (k == Kind::Real) any_real = true;
      if (k == Kind::Integer || k == Kind::Real)
        col_dec[c] = std::max(col_dec[c], decimals_of(cells[r][c].number));
    }
    col_kind[c] =
        (!any_nonnull || any_string) ? Kind::String : (any_real ? Kind::Real : Kind::Integer);
  }
  // Render cell texts.
  std::vector<std::vector<std::string>> text(rows.size(), std::vector<std::string>(ncol));
  std::vector<std::vector<bool>> right(rows.size(), std::vector<bool>(ncol, false));
  std::vector<size_t> width(ncol, 3);
  for (size_t c = 0; c < ncol; ++c) width[c] = std::max(width[c], display_width(headers[c]));
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < ncol; ++c) {
      const Cell& cell = cells[r][c];
      std::string t;
      bool is_right = false;
      if (cell.kind == Kind::Null) {
        t = "";
      } else if (cell.kind == Kind::String) {
        t = cell.text;
      } else {
        is_right = true;
        if (col_kind[c] == Kind::Integer)
          t = format_number(cell.number, 0);
        else if (col_kind[c] == Kind::Real)
          t = format_number(cell.number, col_dec[c]);
        else
          t = cell.kind == Kind::Integer ? format_number(cell.number, 0)
                                         : format_number(cell.number, col_dec[c]);
      }
      text[r][c] = t;
      right[r][c] = is_right;
      width[c] = std::max(width[c], display_width(t));
    }
  std::string out = "|";
  for (size_t c = 0; c < ncol; ++c) {
    size_t w = width[c], len = display_width(headers[c]);
    size_t left = (w - len) / 2;
    out += std::string(left, ' ') + headers[c] + std::string(w - len - left, ' ') + "|";
  }
  out += "\n|";
  for (size_t c = 0; c < ncol; ++c)
    out += (col_kind[c] == Kind::String ? std::string(width[c], '-')
                                        : std::string(width[c] - 1, '-') + ":") +
           "|";
  out += "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (size_t c = 0; c < ncol; ++c)
      out += (right[r][c] ? pad_left(text[r][c], width[c]) : pad_right(text[r][c], width[c])) + "|";
    out += "\n";
  }
  return out;
}

namespace {

constexpr const char* kRawHeader = "Value (raw)";
constexpr const char* kNormalizedHeader = "Normalised (leaderboard)";

// The normalised score the results' leaderboard_normalized gives a row (task or group `name`,
// key "<metric>,<filter>"): the task's own entry, else a leaderboard rule stated for that group
// and metric (BBH and MuSR: the unweighted mean of the normalised subtasks). Null where none:
// always for the reference's own files, which have no leaderboard_normalized.
const Json* normalized_entry(const Json& result_dict, const std::string& name,
                             const std::string& key) {
  if (!result_dict.contains("leaderboard_normalized") ||
      !result_dict["leaderboard_normalized"].is_object())
    return nullptr;
  const Json& ln = result_dict["leaderboard_normalized"];
  if (ln.contains("tasks") && ln["tasks"].contains(name) && ln["tasks"][name].contains(key)) {
    const Json& e = ln["tasks"][name][key];
    if (e.contains("normalized") && e["normalized"].is_number()) return &e;
  }
  if (ln.contains("leaderboard") && ln["leaderboard"].contains(name)) {
    const Json& e = ln["leaderboard"][name];
    if (e.value("metric", std::string()) == key && e.contains("normalized") &&
        e["normalized"].is_number())
      return &e;
  }
  return nullptr;
}

bool any_normalized(const Json& result_dict, const std::string& column) {
  if (!result_dict.contains(column)) return false;
  for (auto it = result_dict[column].begin(); it != result_dict[column].end(); ++it)
    for (auto kt = it.value().begin(); kt != it.value().end(); ++kt)
      if (normalized_entry(result_dict, it.key(), kt.key())) return true;
  return false;
}

}  // namespace

std::string normalized_scores_note(const Json& result_dict) {
  if (!any_normalized(result_dict, "results") && !any_normalized(result_dict, "groups")) return "";
  std::string note = std::string(kRawHeader) + ": the score itself. " + kNormalizedHeader +
                     ": the Open LLM Leaderboard's (raw - random baseline) / (1 - random baseline) "
                     "x 100, clipped at 0 "
                     "(baselines in the results' leaderboard_normalized); a 0-100 scale, not "
                     "comparable with raw scores.\n";
  // Groups the leaderboard scores by its own rule: their normalised score is not the raw one
  // rescaled.
  const Json& ln = result_dict["leaderboard_normalized"];
  if (ln.contains("leaderboard") && result_dict.contains("groups"))
    for (auto it = ln["leaderboard"].begin(); it != ln["leaderboard"].end(); ++it)
      if (result_dict["groups"].contains(it.key()) && it.value().contains("rule") &&
          it.value().contains("metric"))
        note += it.key() + ": " + it.value()["rule"].get<std::string>() +
                " (the leaderboard's rule).\n";
  return note;
}

std::string make_table(const Json& result_dict, const std::string& column, bool show_ci) {
  const Json& section = result_dict[column];
  // Raw and leaderboard-normalised side by side, each named, whenever a task here has a random
  // baseline; the reference's files have none, so their table stays the reference's.
  const bool show_normalized = any_normalized(result_dict, column);
  std::vector<std::string> headers = {
      column == "results" ? "Tasks" : "Groups", "Version", "Filter", "n-shot", "Metric", "",
      show_normalized ? kRawHeader : "Value",   "",        "Stderr"};
  if (show_normalized) headers.emplace_back(kNormalizedHeader);
  if (show_ci) {
    headers.emplace_back("95% CI");
    headers.emplace_back("Clustered SE");
    headers.emplace_back("MDE80");
  }
  const Json& stats =
      result_dict.contains("statistics") ? result_dict["statistics"] : Json::object();
  // Hierarchy walk over group_subtasks (_build_hierarchy_info).
  const Json& gs =
      result_dict.contains("group_subtasks") ? result_dict["group_subtasks"] : Json::object();
  std::set<std::string> children;
  for (auto it = gs.begin(); it != gs.end(); ++it)
    for (const auto& c : it.value()) children.insert(c.get<std::string>());
  std::vector<std::string> roots;
  for (auto it = gs.begin(); it != gs.end(); ++it)
    if (!children.count(it.key())) roots.push_back(it.key());
  std::sort(roots.begin(), roots.end());
  std::vector<std::pair<std::string, int>> order;
  std::set<std::string> seen;
  std::function<void(const std::string&, int)> walk = [&](const std::string& name, int depth) {
    if (section.contains(name) && !seen.count(name)) {
      order.emplace_back(name, depth);
      seen.insert(name);
    }
    if (gs.contains(name)) {
      std::vector<std::string> kids;
      for (const auto& c : gs[name]) kids.push_back(c.get<std::string>());
      std::sort(kids.begin(), kids.end());
      for (const auto& k : kids) walk(k, depth + 1);
    }
  };
  for (const auto& r : roots) walk(r, 0);
  std::vector<std::string> rest;
  for (auto it = section.begin(); it != section.end(); ++it)
    if (!seen.count(it.key())) rest.push_back(it.key());
  std::sort(rest.begin(), rest.end());
  for (const auto& r : rest) order.emplace_back(r, 0);

  std::vector<std::vector<Json>> rows;
  for (const auto& [k, depth] : order) {
    const Json& dic = section[k];
    Json version =
        result_dict["versions"].contains(k) ? result_dict["versions"][k] : Json("    N/A");
    Json n =
        result_dict["n-shot"].contains(k) ? Json(py::str(result_dict["n-shot"][k])) : Json(" ");
    std::string name = dic.contains("alias") ? dic["alias"].get<std::string>() : k;
    if (depth > 0) name = std::string(static_cast<size_t>(depth), ' ') + "- " + name;
    const Json& hib = result_dict["higher_is_better"].contains(k)
                          ? result_dict["higher_is_better"][k]
                          : Json::object();
    std::vector<std::string> keys;
    for (auto it = dic.begin(); it != dic.end(); ++it) {
      const std::string& mf = it.key();
      if (mf == "alias" || mf == "name" || mf == "sample_len" || mf == "sample_count") continue;
      keys.push_back(mf);
    }
    std::sort(keys.begin(), keys.end());
    bool first = true;
    for (const auto& mf : keys) {
      auto comma = mf.find(',');
      std::string m = mf.substr(0, comma),
                  f = comma == std::string::npos ? "" : mf.substr(comma + 1);
      if (m.size() >= 7 && m.substr(m.size() - 7) == "_stderr") continue;
      const Json& v = dic[mf];
      std::string arrow;
      if (hib.contains(m) && hib[m].is_boolean()) arrow = hib[m].get<bool>() ? "↑" : "↓";
      Json vcell = v.is_number_float() ? Json(format_number(v.get<double>(), 4)) : v;
      std::vector<Json> row = {name, version, f, n, m, arrow, vcell};
      std::string se_key = m + "_stderr," + f;
      if (dic.contains(se_key)) {
        const Json& se = dic[se_key];
        row.emplace_back("±");
        row.push_back(se.is_string() ? Json("   N/A") : Json(format_number(se.get<double>(), 4)));
      } else {
        row.emplace_back("");
        row.emplace_back("");
      }
      if (show_normalized) {
        const Json* e = normalized_entry(result_dict, k, mf);
        row.push_back(e ? Json(format_number((*e)["normalized"].get<double>(), 2)) : Json(""));
      }
      if (show_ci) {
        const Json& st = stats.contains(k) ? stats[k] : Json::object();
        const std::string ci_key = m + "_ci95," + f, cl_key = m + "_stderr_clustered," + f,
                          n_key = m + "_n_clusters," + f, mde_key = m + "_mde80," + f;
        const Json& ci = st.contains(ci_key) ? st[ci_key] : Json();
        row.push_back(ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number()
                          ? Json("[" + format_number(ci[0].get<double>(), 4) + ", " +
                                 format_number(ci[1].get<double>(), 4) + "]")
                      : st.contains(m + "_ci95_undefined," + f) ? Json("undefined")
                                                                : Json(""));
        const Json& cl = st.contains(cl_key) ? st[cl_key] : Json();
        row.push_back(cl.is_number() ? Json(format_number(cl.get<double>(), 4) + " (" +
                                            st[n_key].dump() + " clusters)")
                                     : Json(""));
        const Json& mde = st.contains(mde_key) ? st[mde_key] : Json();
        // An MDE the run cannot give (zero SE) reads "undefined", never 0; the notes say why.
        row.push_back(mde.is_number() ? Json(format_number(mde.get<double>(), 4))
                      : st.contains(m + "_mde80_undefined," + f) ? Json("undefined")
                                                                 : Json(""));
      }
      if (!first) {
        row[0] = "";
        row[1] = "";
      }
      first = false;
      rows.push_back(row);
    }
  }
  return markdown_table(headers, rows);
}

}  // namespace lmeval

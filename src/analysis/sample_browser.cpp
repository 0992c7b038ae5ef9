// The sample browser of `lm-eval report` (analysis/sample_browser.hpp).
#include "analysis/sample_browser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace lmeval::analysis {

namespace {

// gen_args_i's arg_j, whichever way the line wrote its arguments (the samples file's dict, or
// the request's lists).
std::vector<std::vector<Json>> argument_lists(const Json& arguments) {
  std::vector<std::vector<Json>> out;
  auto row = [](const Json& a) {
    std::vector<Json> r;
    if (a.is_object())
      for (const auto& [k, v] : a.items()) r.push_back(v);
    else if (a.is_array())
      for (const auto& v : a) r.push_back(v);
    return r;
  };
  if (arguments.is_object())
    for (const auto& [k, v] : arguments.items()) out.push_back(row(v));
  else if (arguments.is_array())
    for (const auto& v : arguments) out.push_back(row(v));
  return out;
}

std::string plain(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A [log-likelihood, is_greedy] pair; the samples file writes it as text (sanitize_list:
// ["-4.3", "True"]).
bool ll_pair(const Json& v) {
  if (!v.is_array() || v.size() != 2) return false;
  if (v[0].is_number() && v[1].is_boolean()) return true;
  if (!v[0].is_string() || !v[1].is_string()) return false;
  const std::string& g = v[1].get_ref<const std::string&>();
  char* end = nullptr;
  const std::string& n = v[0].get_ref<const std::string&>();
  std::strtod(n.c_str(), &end);
  return (g == "True" || g == "False") && !n.empty() && end && *end == '\0';
}
double ll_value(const Json& v) {
  return v[0].is_number() ? v[0].get<double>()
                          : std::strtod(v[0].get_ref<const std::string&>().c_str(), nullptr);
}
bool ll_greedy(const Json& v) { return v[1].is_boolean() ? v[1].get<bool>() : v[1] == "True"; }

// The script: the page's only code. Text goes in through textContent, never as markup, so the
// model's outputs cannot inject anything.
const char* kBrowserScript = R"JS((function () {
  const D = JSON.parse(document.getElementById('sb-data').textContent);
  const $ = (id) => document.getElementById(id);
  const PAGE = 25;
  let page = 0;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const fill = (sel, names) => {
    names.forEach((n, i) => { const o = el('option', '', n); o.value = i; sel.appendChild(o); });
  };
  fill($('sb-task'), D.tasks.map((t) => t.name + ' (' + t.items.length + ' documents)'));
  fill($('sb-a'), D.runs);
  fill($('sb-b'), D.runs);
  if (D.runs.length > 1) $('sb-b').value = 1;
  const first = (r) => { if (!r) return null; for (const v of r.scores) if (v !== null) return v; return null; };
  const wrong = (r) => { const v = first(r); return v !== null && v < 1; };
  const answer = (r) => (r ? Object.values(r.filtered).join(' | ') : '');
  const fmt = (v) => (v === null ? '–' : (Number.isInteger(v) ? String(v) : v.toFixed(4)));
  function selected() {
    const t = D.tasks[+$('sb-task').value], a = +$('sb-a').value, b = +$('sb-b').value;
    const q = $('sb-q').value.trim().toLowerCase();
    const onlyWrong = $('sb-wrong').checked, onlyDiff = $('sb-diff').checked;
    const hits = t.items.filter((it) => {
      const A = it.by[a], B = it.by[b];
      if (onlyWrong && !wrong(A) && !wrong(B)) return false;
      if (onlyDiff && first(A) === first(B) && answer(A) === answer(B)) return false;
      if (!q) return true;
      const hay = [String(it.id), it.target, A && A.prompt, answer(A), A && A.resps.join(' '),
                   answer(B), B && B.resps.join(' ')].join('\n').toLowerCase();
      return hay.includes(q);
    });
    return { t, a, b, hits };
  }
  function side(td, r, keys) {
    if (!r) { td.appendChild(el('div', 'note', 'not in this run')); return; }
    const ans = el('div', 'sb-answer' + (wrong(r) ? ' sb-wrong' : ''));
    ans.appendChild(el('b', '', 'answer: '));
    ans.appendChild(document.createTextNode(answer(r)));
    td.appendChild(ans);
    const sc = el('div', 'sb-scores');
    keys.forEach((k, i) => sc.appendChild(el('span', '', k + ' = ' + fmt(r.scores[i]))));
    td.appendChild(sc);
    const d = el('details');
    d.appendChild(el('summary', '', 'responses (' + r.resps.length + ')'));
    d.appendChild(el('pre', 'sb-text', r.resps.join('\n')));
    td.appendChild(d);
  }
  function render() {
    const { t, a, b, hits } = selected();
    const pages = Math.max(1, Math.ceil(hits.length / PAGE));
    page = Math.min(page, pages - 1);
    const body = $('sb-rows');
    body.textContent = '';
    $('sb-head-a').textContent = 'run A: ' + D.runs[a];
    $('sb-head-b').textContent = 'run B: ' + D.runs[b];
    hits.slice(page * PAGE, page * PAGE + PAGE).forEach((it) => {
      const tr = el('tr', 'sb-row');
      tr.appendChild(el('td', 'num', String(it.id)));
      const p = el('td');
      const A = it.by[a] || it.by[b];
      const prompt = A ? A.prompt : '';
      const d = el('details');
      d.appendChild(el('summary', 'sb-text', prompt.length > 160 ? '…' + prompt.slice(-160) : prompt));
      d.appendChild(el('pre', 'sb-text', prompt));
      p.appendChild(d);
      if (it.choices.length) p.appendChild(el('div', 'note', 'choices: ' + it.choices.map((c, i) => i + '. ' + c.trim()).join('  ')));
      const B = it.by[b];
      if (it.by[a] && B && it.by[a].prompt !== B.prompt) p.appendChild(el('div', 'note', 'run B saw another prompt'));
      p.appendChild(el('div', 'sb-target', 'target: ' + it.target));
      tr.appendChild(p);
      const ta = el('td'), tb = el('td');
      side(ta, it.by[a], t.keys);
      side(tb, it.by[b], t.keys);
      tr.appendChild(ta);
      tr.appendChild(tb);
      body.appendChild(tr);
    });
    const from = hits.length ? page * PAGE + 1 : 0;
    $('sb-count').textContent = 'documents ' + from + '–' + Math.min(hits.length, (page + 1) * PAGE) +
      ' of ' + hits.length + ' matching (' + t.items.length + ' in ' + t.name + '); page ' + (page + 1) + ' of ' + pages;
    $('sb-prev').disabled = page === 0;
    $('sb-next').disabled = page >= pages - 1;
  }
  ['sb-task', 'sb-a', 'sb-b', 'sb-wrong', 'sb-diff'].forEach((id) => $(id).addEventListener('change', () => { page = 0; render(); }));
  $('sb-q').addEventListener('input', () => { page = 0; render(); });
  $('sb-prev').addEventListener('click', () => { page--; render(); });
  $('sb-next').addEventListener('click', () => { page++; render(); });
  render();
})();)JS";

const char* kBrowserStyle =
    R"(.sb-controls{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;font-size:13px;margin:8px 0}
.sb-controls input[type=search]{width:220px}#sb-table{table-layout:fixed;width:100%}
#sb-table td{font-size:12px}.sb-text{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:11px;margin:2px 0}
summary.sb-text{display:list-item;cursor:pointer}.sb-answer{margin-bottom:3px}.sb-wrong{color:#b00020}
.sb-scores span{display:inline-block;margin-right:10px;color:#333}.sb-target{margin-top:4px;font-weight:600})";

}  // namespace

std::string prompt_text(const Json& arguments) {
  auto lists = argument_lists(arguments);
  return lists.empty() || lists[0].empty() ? std::string() : plain(lists[0][0]);
}

std::vector<std::string> choices_of(const Json& arguments) {
  auto lists = argument_lists(arguments);
  std::vector<std::string> out;
  if (lists.size() < 2) return out;
  for (const auto& l : lists) {
    if (l.size() != 2 || !l[1].is_string() || l[0] != lists[0][0]) return {};
    out.push_back(l[1].get<std::string>());
  }
  return out;
}

std::string responses_text(const Json& resps) {
  if (!resps.is_array()) return resps.is_null() ? "" : plain(resps);
  std::string out;
  for (const auto& r : resps) {
    std::string line;
    const Json& v = r.is_array() && r.size() == 1 ? r[0] : r;
    if (ll_pair(v))
      line = fmt::format("log-likelihood {:.4f}{}", ll_value(v), ll_greedy(v) ? " (greedy)" : "");
    else
      line = plain(v);
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

std::string answer_text(const Json& filtered, const std::vector<std::string>& choices) {
  if (filtered.is_string()) return filtered.get<std::string>();
  if (!filtered.is_array()) return filtered.is_null() ? "" : filtered.dump();
  if (filtered.size() == 1 && filtered[0].is_string()) return filtered[0].get<std::string>();
  // Log-likelihoods (multiple choice): the highest is the model's choice, the first on a tie as
  // numpy's argmax takes it.
  std::vector<double> ll;
  for (const auto& v : filtered) {
    if (ll_pair(v))
      ll.push_back(ll_value(v));
    else if (v.is_number())
      ll.push_back(v.get<double>());
    else
      return filtered.dump();
  }
  if (ll.empty()) return "";
  const auto k = static_cast<std::size_t>(std::max_element(ll.begin(), ll.end()) - ll.begin());
  std::string text = k < choices.size() ? choices[k] : "";
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return fmt::format("choice {}{}", k, text.empty() ? "" : ": " + text);
}

std::string sample_browser_section(const std::vector<Run>& runs) {
  Json data = {{"runs", Json::array()}, {"tasks", Json::array()}};
  for (const auto& r : runs) data["runs"].push_back(r.label);
  std::vector<std::string> tasks;
  for (const auto& r : runs)
    for (const auto& [t, ts] : r.samples)
      if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
  for (const auto& task : tasks) {
    std::vector<std::string> keys;
    std::vector<std::string> order;  // item keys: the first run's order, then the others' extras
    for (const auto& r : runs) {
      auto it = r.samples.find(task);
      if (it == r.samples.end()) continue;
      for (const auto& k : it->second.score_keys)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      for (const auto& item : it->second.items)
        if (std::find(order.begin(), order.end(), item.key) == order.end())
          order.push_back(item.key);
    }
    Json items = Json::array();
    for (const auto& key : order) {
      Json entry = {{"id", 0}, {"target", ""}, {"choices", Json::array()}, {"by", Json::array()}};
      bool described = false;
      for (const auto& r : runs) {
        auto it = r.samples.find(task);
        if (it == r.samples.end() || !it->second.index.count(key)) {
          entry["by"].push_back(nullptr);
          continue;
        }
        const auto pos = it->second.index.find(key);
        const Item& item = it->second.items[pos->second];
        const auto choices = choices_of(item.arguments);
        if (!described) {
          entry["id"] = item.doc_id;
          entry["target"] = plain(item.target);
          entry["choices"] = choices;
          described = true;
        }
        Json side = {{"prompt", prompt_text(item.arguments)},
                     {"resps", Json::array()},
                     {"filtered", Json::object()},
                     {"scores", Json::array()}};
        for (const auto& r2 : item.resps.is_array() ? item.resps : Json::array({item.resps}))
          side["resps"].push_back(responses_text(Json::array({r2})));
        for (const auto& [filter, f] : item.filtered.items())
          side["filtered"][filter] = answer_text(f, choices);
        for (const auto& k : keys) {
          auto s = it->second.scores.find(k);
          const double v = s == it->second.scores.end() ? std::nan("") : s->second[pos->second];
          side["scores"].push_back(std::isfinite(v) ? Json(v) : Json());
        }
        entry["by"].push_back(std::move(side));
      }
      items.push_back(std::move(entry));
    }
    data["tasks"].push_back({{"name", task}, {"keys", keys}, {"items", std::move(items)}});
  }
  if (data["tasks"].empty()) return "";
  // Inside <script>, "</script" or "<!--" in a prompt would end or confuse the block: every '<'
  // goes in as the JSON escape \u003c.
  std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace), safe;
  safe.reserve(json.size());
  for (char c : json) safe += c == '<' ? std::string("\\u003c") : std::string(1, c);

  std::string h = "<h2 id=\"samples\">Samples</h2>\n<style>";
  h += kBrowserStyle;
  h += "</style>\n<p class=\"note\">Every document of each task with its prompt, the target and, "
       "for two runs side by side, the filtered answer, every metric and the raw responses. "
       "<i>wrong only</i> keeps documents whose first metric is below 1 in run A or run B; "
       "<i>differs between runs</i> those whose first metric or answer differs between A and B. "
       "The search looks through the document number, prompt, target, answers and responses. "
       "25 documents per page.</p>\n"
       "<div class=\"sb-controls\"><label>task <select id=\"sb-task\"></select></label>"
       "<label>run A <select id=\"sb-a\"></select></label>"
       "<label>run B <select id=\"sb-b\"></select></label>"
       "<label>search <input type=\"search\" id=\"sb-q\" placeholder=\"text in the documents\">"
       "</label><label><input type=\"checkbox\" id=\"sb-wrong\"> wrong only</label>"
       "<label><input type=\"checkbox\" id=\"sb-diff\"> differs between runs</label></div>\n"
       "<div class=\"sb-controls\"><button id=\"sb-prev\">previous</button>"
       "<button id=\"sb-next\">next</button><span id=\"sb-count\"></span></div>\n"
       "<table id=\"sb-table\"><colgroup><col style=\"width:6%\"><col style=\"width:34%\">"
       "<col style=\"width:30%\"><col style=\"width:30%\"></colgroup><thead><tr><th>doc</th>"
       "<th>prompt and target</th><th id=\"sb-head-a\">run A</th><th id=\"sb-head-b\">run B</th>"
       "</tr></thead><tbody id=\"sb-rows\"></tbody></table>\n";
  h += "<script type=\"application/json\" id=\"sb-data\">" + safe + "</script>\n<script>";
  h += kBrowserScript;
  h += "</script>\n";
  return h;
}

}  // namespace lmeval::analysis

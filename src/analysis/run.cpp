// Reading a run back: locate the results file, then its samples files, and pair lines into items.
#include "lmeval/analysis/run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/file_names.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval::analysis {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& file) {
  return read_input_file(file, "file", "a results or samples file");
}

// 1-based line and column of a byte offset.
std::pair<int, int> line_column(const std::string& text, std::size_t byte) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

bool is_results_name(const std::string& name) {
  return name.size() > 5 && name.ends_with(".json") && !name.starts_with("samples_");
}

// The newest results_*.json in a folder (dates sort as text), or empty.
fs::path newest_results_in(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().starts_with("results_") &&
        e.path().extension() == ".json")
      found.push_back(e.path());
  if (found.empty()) return {};
  std::sort(found.begin(), found.end());
  return found.back();
}

fs::path locate_results(const std::string& path) {
  fs::path p(path);
  if (!fs::exists(p))
    throw UserError(
        "no such file or folder: " + path, {path, 0, 0, ""},
        "an output folder of `lm-eval run --log_samples` or a results_<date>.json file");
  if (fs::is_regular_file(p)) {
    if (!is_results_name(p.filename().string()))
      throw UserError("not a results file: " + path, {path, 0, 0, ""},
                      "a results_<date>.json file");
    return p;
  }
  if (fs::path r = newest_results_in(p); !r.empty()) return r;
  std::vector<fs::path> candidates;
  for (const auto& e : fs::directory_iterator(p))
    if (e.is_directory())
      if (fs::path r = newest_results_in(e.path()); !r.empty()) candidates.push_back(r);
  if (candidates.empty())
    throw UserError("no results_*.json in " + path + " or its model folders", {path, 0, 0, ""},
                    "an output folder of `lm-eval run --output_path ... --log_samples`");
  if (candidates.size() > 1) {
    std::sort(candidates.begin(), candidates.end());
    std::string list;
    for (const auto& c : candidates) list += "\n  " + c.parent_path().string();
    throw UserError(path + " holds runs of several models; name one folder:" + list,
                    {path, 0, 0, ""}, "one model's output folder");
  }
  return candidates.front();
}

// "<stem>_<date>.json" -> "<date>" (dates contain no '_').
std::string date_of(const fs::path& results_file) {
  std::string stem = results_file.stem().string();
  std::size_t u = stem.rfind('_');
  return u == std::string::npos ? stem : stem.substr(u + 1);
}

double as_score(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return std::numeric_limits<double>::quiet_NaN();
}

// A document's cluster as the run computed it (evaluator/scoring.cpp's cluster_of): the field's
// text, or the key rendered as a task template over the document.
std::string cluster_value(const Json& doc, const std::string& key, const fs::path& file, int line) {
  if (key.empty()) return {};
  if (doc.is_object() && doc.contains(key))
    return doc[key].is_string() ? doc[key].get<std::string>() : py::str(doc[key]);
  try {
    return tmpl::render(key, doc, tmpl::task_options(), "cluster_key");
  } catch (const std::exception& e) {
    throw UserError(std::string("cannot compute the document's cluster: ") + e.what(),
                    {file.string(), line, 0, "cluster_key"},
                    "a document field or a template over the logged document");
  }
}

// The task's cluster key, from its config or the statistics section.
std::string cluster_key_of(const Json& results, const std::string& task) {
  for (const char* section : {"configs", "statistics", "results"}) {
    if (results.contains(section) && results[section].contains(task)) {
      const Json& t = results[section][task];
      if (t.is_object() && t.contains("cluster_key") && t["cluster_key"].is_string())
        return t["cluster_key"].get<std::string>();
    }
  }
  return {};
}

TaskSamples read_samples(const fs::path& file, const std::string& cluster_key) {
  TaskSamples ts;
  ts.file = file;
  ts.cluster_key = cluster_key;
  const std::string text = read_text(file);
  struct Acc {
    double sum = 0;
    int count = 0;
  };
  // (doc_hash, doc_id) -> item slot; per slot, "metric,filter" -> running mean.
  std::map<std::pair<std::string, long long>, std::size_t> slot_of;
  std::vector<Item> items;
  std::vector<std::map<std::string, Acc>> acc;
  // per slot, "metric,filter" -> seed position -> running mean (runs with --fewshot_seeds)
  std::vector<std::map<std::string, std::map<std::size_t, Acc>>> seed_acc;
  // per slot, "metric,filter" -> the per-answer scores of its repeat_scores (first seed's line)
  std::vector<std::map<std::string, std::vector<double>>> answers;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j;
    require_json_nesting(line, file.string(), 0, line_no);
    try {
      j = Json::parse(line);
    } catch (const Json::out_of_range& e) {
      throw_json_number_overflow(e, line, file.string(), line_no);
    } catch (const Json::parse_error& e) {
      throw UserError(std::string("corrupt samples line: ") + e.what(),
                      {file.string(), line_no, static_cast<int>(e.byte), ""},
                      "one JSON object per line");
    }
    auto need = [&](const char* field, bool ok) {
      if (!ok)
        throw UserError(std::string("sample line lacks a valid '") + field + "'",
                        {file.string(), line_no, 0, field},
                        "a samples line written by lm-eval run --log_samples");
    };
    need("doc_id", j.is_object() && j.contains("doc_id") && j["doc_id"].is_number_integer());
    need("doc_hash", j.contains("doc_hash") && j["doc_hash"].is_string());
    need("metrics", j.contains("metrics") && j["metrics"].is_array());
    const std::string filter =
        j.contains("filter") && j["filter"].is_string() ? j["filter"].get<std::string>() : "none";
    auto key = std::make_pair(j["doc_hash"].get<std::string>(), j["doc_id"].get<long long>());
    auto [it, fresh] = slot_of.emplace(key, items.size());
    if (fresh) {
      Item item;
      item.doc_hash = key.first;
      item.doc_id = key.second;
      if (j.contains("doc")) item.doc = j["doc"];
      if (j.contains("target")) item.target = j["target"];
      item.cluster = cluster_value(item.doc, cluster_key, file, line_no);
      if (j.contains("arguments")) item.arguments = j["arguments"];
      if (j.contains("resps")) item.resps = j["resps"];
      items.push_back(std::move(item));
      acc.emplace_back();
      seed_acc.emplace_back();
      answers.emplace_back();
    }
    std::optional<std::size_t> seed_pos;
    if (j.contains("fewshot_seed") && j["fewshot_seed"].is_number_integer()) {
      const long long seed = j["fewshot_seed"].get<long long>();
      auto sp = std::find(ts.fewshot_seeds.begin(), ts.fewshot_seeds.end(), seed);
      seed_pos = static_cast<std::size_t>(sp - ts.fewshot_seeds.begin());
      if (sp == ts.fewshot_seeds.end()) ts.fewshot_seeds.push_back(seed);
    }
    Item& item = items[it->second];
    if (j.contains("filtered_resps") && !item.filtered.contains(filter))
      item.filtered[filter] = j["filtered_resps"];
    if (j.contains("prompt_hash") && j["prompt_hash"].is_string()) {
      std::string ph = j["prompt_hash"].get<std::string>();
      if (item.prompt_hash.empty()) item.prompt_hash = ph;
      if (std::find(item.prompt_hashes.begin(), item.prompt_hashes.end(), ph) ==
          item.prompt_hashes.end())
        item.prompt_hashes.push_back(ph);
    }
    for (const auto& m : j["metrics"]) {
      if (!m.is_string()) continue;
      const std::string name = m.get<std::string>();
      if (!j.contains(name)) continue;
      // A score written as text ("NaN", "0.5") was skipped like a corpus-level tuple, so its
      // document silently left the comparison.
      if (j[name].is_string())
        throw UserError("metric '" + name + "' is the string " + j[name].dump().substr(0, 80),
                        {file.string(), line_no, 0, name},
                        "a number or true/false per document, as lm-eval run --log_samples "
                        "writes it (NaN as the bare JSON token NaN)");
      double v = as_score(j[name]);
      if (std::isnan(v)) continue;  // corpus-level metrics log tuples, not per-item scores
      const std::string sk = name + "," + filter;
      if (std::find(ts.score_keys.begin(), ts.score_keys.end(), sk) == ts.score_keys.end())
        ts.score_keys.push_back(sk);
      acc[it->second][sk].sum += v;
      acc[it->second][sk].count += 1;
      if (seed_pos) {
        Acc& sa = seed_acc[it->second][sk][*seed_pos];
        sa.sum += v;
        sa.count += 1;
      }
    }
    if (j.contains("repeat_scores") && j["repeat_scores"].is_object() && seed_pos.value_or(0) == 0)
      for (const auto& [name, values] : j["repeat_scores"].items()) {
        if (!values.is_array()) continue;
        std::vector<double>& dst = answers[it->second][name + "," + filter];
        dst.clear();
        for (const auto& v : values) dst.push_back(as_score(v));
      }
  }
  // doc_id order; duplicated documents get "#k" keys in that order.
  std::vector<std::size_t> order(items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return items[a].doc_id < items[b].doc_id; });
  std::map<std::string, int> copies;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& sk : ts.score_keys) {
    ts.scores[sk].assign(items.size(), nan);
    if (ts.fewshot_seeds.size() >= 2)
      ts.seed_scores[sk].assign(ts.fewshot_seeds.size(), std::vector<double>(items.size(), nan));
  }
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    Item item = items[order[pos]];
    std::sort(item.prompt_hashes.begin(), item.prompt_hashes.end());
    int k = copies[item.doc_hash]++;
    item.key = k == 0 ? item.doc_hash : item.doc_hash + "#" + std::to_string(k);
    ts.index[item.key] = pos;
    for (const auto& [sk, a] : acc[order[pos]]) ts.scores[sk][pos] = a.sum / a.count;
    for (auto& [sk, values] : answers[order[pos]]) {
      auto& per_item = ts.repeat_scores[sk];
      per_item.resize(items.size());
      per_item[pos] = std::move(values);
    }
    if (ts.fewshot_seeds.size() >= 2)
      for (const auto& [sk, by_seed] : seed_acc[order[pos]])
        for (const auto& [k, a] : by_seed) ts.seed_scores[sk][k][pos] = a.sum / a.count;
    ts.items.push_back(std::move(item));
  }
  return ts;
}

// A run's model_args as key -> text: the results' config holds an object, or the "k=v,k=v" string.
std::map<std::string, std::string> model_args_of(const Run& run) {
  std::map<std::string, std::string> out;
  const Json& cfg = run.results.contains("config") ? run.results["config"] : Json();
  if (!cfg.is_object() || !cfg.contains("model_args")) return out;
  const Json& ma = cfg["model_args"];
  if (ma.is_object()) {
    for (auto it = ma.begin(); it != ma.end(); ++it)
      out[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
  } else if (ma.is_string()) {
    std::stringstream in(ma.get<std::string>());
    for (std::string kv; std::getline(in, kv, ',');)
      if (auto eq = kv.find('='); eq != std::string::npos)
        out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

}  // namespace

Json read_json_file(const fs::path& file) {
  const std::string text = read_text(file);
  require_json_nesting(text, file.string());
  try {
    return Json::parse(text);
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, text, file.string());
  } catch (const Json::parse_error& e) {
    auto [line, col] = line_column(text, e.byte > 0 ? e.byte - 1 : 0);
    throw UserError(std::string("corrupt JSON: ") + e.what(), {file.string(), line, col, ""},
                    "a valid JSON document");
  }
}

std::vector<std::string> Run::tasks() const {
  std::vector<std::string> out;
  if (results.contains("configs") && results["configs"].is_object())
    for (auto it = results["configs"].begin(); it != results["configs"].end(); ++it)
      out.push_back(it.key());
  return out;
}

Run load_run(const std::string& path) {
  Run run;
  run.source = path;
  run.results_file = locate_results(path);
  run.results = read_json_file(run.results_file);
  const std::string rf = run.results_file.string();
  for (const char* key : {"results", "configs"})
    if (!run.results.is_object() || !run.results.contains(key) || !run.results[key].is_object())
      throw UserError(std::string("results file lacks the '") + key + "' object", {rf, 0, 0, key},
                      "a results file written by lm-eval run");
  // The model name, or for a local model folder its last component (hub ids "org/name" stay whole).
  run.label = run.results.contains("model_name") && run.results["model_name"].is_string()
                  ? run.results["model_name"].get<std::string>()
                  : std::string();
  // A model given by none of these arguments (dummy, API models without one) gets a random
  // 8-character name from the reference's GeneralConfigTracker (random_name_id): no label for a
  // person, so the model type below stands in for it.
  {
    const auto args = model_args_of(run);
    bool named = false;
    for (const char* k : {"peft", "delta", "pretrained", "model", "path", "engine"})
      named = named || (args.count(k) && args.at(k) == run.label);
    const bool random_like =
        run.label.size() == 8 && std::all_of(run.label.begin(), run.label.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        });
    if (!named && random_like && run.results.contains("config")) run.label.clear();
  }
  if (!run.label.empty() && (run.label[0] == '/' || run.label[0] == '.')) {
    fs::path p(run.label);
    run.label = (p.has_filename() ? p : p.parent_path()).filename().string();
  }
  // Without a model name: the model type and its pretrained argument, before the folder's name.
  if (run.label.empty()) {
    const Json& cfg = run.results.contains("config") ? run.results["config"] : Json();
    if (cfg.is_object() && cfg.contains("model") && cfg["model"].is_string())
      run.label = cfg["model"].get<std::string>();
    if (auto args = model_args_of(run); args.count("pretrained")) {
      fs::path p(args["pretrained"]);
      run.label = (p.has_filename() ? p : p.parent_path()).filename().string();
    }
  }
  if (run.label.empty()) run.label = run.results_file.parent_path().filename().string();
  const std::string date = date_of(run.results_file);
  for (const std::string& task : run.tasks()) {
    fs::path sf = run.results_file.parent_path() /
                  ("samples_" + safe_file_component(task) + "_" + date + ".jsonl");
    if (!fs::exists(sf))
      throw UserError(
          "no samples file for task '" + task + "' of " + rf + " (looked for " + sf.string() + ")",
          {sf.string(), 0, 0, ""}, "per-item scores: rerun `lm-eval run` with --log_samples");
    run.samples[task] = read_samples(sf, cluster_key_of(run.results, task));
  }
  return run;
}

void label_runs(std::vector<Run>& runs) {
  // Runs sharing a model name are told apart by the model_args that differ between them
  // ("model (dtype=float16)"); only runs alike in those too get "#2", "#3".
  std::map<std::string, std::vector<std::size_t>> by_label;
  for (std::size_t i = 0; i < runs.size(); ++i) by_label[runs[i].label].push_back(i);
  for (auto& [label, members] : by_label) {
    if (members.size() < 2) continue;
    std::vector<std::map<std::string, std::string>> args;
    std::set<std::string> keys;
    for (std::size_t i : members) {
      args.push_back(model_args_of(runs[i]));
      for (const auto& [k, v] : args.back()) keys.insert(k);
    }
    std::vector<std::string> differing;
    for (const auto& k : keys)
      for (const auto& a : args)
        if ((a.count(k) ? a.at(k) : "") != (args[0].count(k) ? args[0].at(k) : "")) {
          differing.push_back(k);
          break;
        }
    if (differing.empty()) continue;
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::string extra;
      for (const auto& k : differing)
        extra +=
            (extra.empty() ? "" : ", ") + k + "=" + (args[m].count(k) ? args[m].at(k) : "(unset)");
      runs[members[m]].label += " (" + extra + ")";
    }
  }
  std::map<std::string, int> seen;
  for (auto& r : runs) {
    int k = ++seen[r.label];
    if (k > 1) r.label += "#" + std::to_string(k);
  }
}

std::optional<NormalizedScore> normalized_score(const Run& run, const std::string& task,
                                                const std::string& key) {
  const Json& r = run.results;
  if (!r.contains("leaderboard_normalized") || !r["leaderboard_normalized"].is_object())
    return std::nullopt;
  const Json& tasks =
      r["leaderboard_normalized"].contains("tasks") ? r["leaderboard_normalized"]["tasks"] : Json();
  auto num = [](const Json& e, const char* k) {
    return e.is_object() && e.contains(k) && e[k].is_number();
  };
  if (tasks.is_object() && tasks.contains(task) && tasks[task].is_object() &&
      tasks[task].contains(key)) {
    const Json& e = tasks[task][key];
    if (num(e, "raw") && num(e, "random_baseline") && num(e, "normalized"))
      return NormalizedScore{e["raw"].get<double>(), e["normalized"].get<double>(),
                             e["random_baseline"].get<double>(), ""};
  }
  const Json& lb = r["leaderboard_normalized"].contains("leaderboard")
                       ? r["leaderboard_normalized"]["leaderboard"]
                       : Json();
  if (lb.is_object() && lb.contains(task) && lb[task].is_object() &&
      lb[task].value("metric", std::string()) == key && num(lb[task], "normalized") &&
      lb[task].contains("rule") && lb[task]["rule"].is_string()) {
    const Json& res =
        r.contains("results") && r["results"].contains(task) ? r["results"][task] : Json();
    return NormalizedScore{num(res, key.c_str()) ? res[key].get<double>() : std::nan(""),
                           lb[task]["normalized"].get<double>(), std::nullopt,
                           lb[task]["rule"].get<std::string>()};
  }
  return std::nullopt;
}

std::vector<Run> load_runs(const std::vector<std::string>& paths) {
  std::vector<Run> runs;
  for (const auto& p : paths) runs.push_back(load_run(p));
  label_runs(runs);
  return runs;
}

}  // namespace lmeval::analysis

// Comparing a run of lm-eval with a golden run of the reference (a goldens folder laid out as
// ../shared/goldens: manifest.json, results/, samples/, requests/; see its README). Used by the
// golden tests over ../shared/goldens and over the stand-in goldens of tests/fixtures.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace lmeval::testing::golden {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Top-level results keys that are dates, environment, or lm-eval's own additions.
inline const std::set<std::string>& skipped_top_keys() {
  static const std::set<std::string> keys = {"date",
                                             "total_evaluation_time_seconds",
                                             "pretty_env_info",
                                             "transformers_version",
                                             "git_hash",
                                             "upper_git_hash",
                                             "lm_eval_version",
                                             "leaderboard_normalized",
                                             "performance",
                                             "statistics",
                                             "manifest"};
  return keys;
}

// Per-document values computed through numpy's SIMD exp (truthfulqa_mc2's acc), which can be
// 1-2 ulp away from the C library's exp: compared with that tolerance.
inline bool ulp_tolerant(const std::string& path) {
  return path.rfind("samples[truthfulqa_mc2,", 0) == 0 && path.size() > 4 &&
         path.compare(path.size() - 4, 4, "/acc") == 0;
}

// A config value the reference shows as the Python source of a `!function` ("def name(...") or
// its repr ("<function name at 0x...>") matches our display of the same function ("file.name").
inline bool function_display_matches(const Json& ours, const Json& golden) {
  if (!ours.is_string() || !golden.is_string()) return false;
  const std::string& g = golden.get_ref<const std::string&>();
  const std::string& o = ours.get_ref<const std::string&>();
  // A class run in the embedded Python: its repr names the module by its path, which differs by
  // the folder the fixture lies in.
  if (g.rfind("<class '", 0) == 0 && o.rfind("<class '", 0) == 0) {
    const std::string tail = g.substr(g.rfind('/') + 1);
    return o.size() >= tail.size() && o.compare(o.size() - tail.size(), tail.size(), tail) == 0;
  }
  std::string name;
  if (g.rfind("def ", 0) == 0) {
    size_t paren = g.find('(');
    if (paren == std::string::npos) return false;
    name = g.substr(4, paren - 4);
  } else if (g.rfind("<function ", 0) == 0) {  // repr() of the function, e.g. in fewshot_config
    size_t end = g.find(' ', 10);
    if (end == std::string::npos) return false;
    name = g.substr(10, end - 10);
  } else {
    return false;
  }
  // A function run in the embedded Python shows its own repr: the same but for its address.
  if (g.rfind("<function ", 0) == 0 && o.rfind("<function " + name + " at 0x", 0) == 0) return true;
  return o.size() >= name.size() && o.compare(o.size() - name.size(), name.size(), name) == 0;
}

// Every difference between `a` (ours) and `b` (golden) below `path`, key order included.
inline void walk(const Json& a, const Json& b, const std::string& path,
                 std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    std::vector<std::string> order_a, order_b;
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) {
        out.push_back("missing " + path + "/" + it.key());
      } else {
        walk(a.at(it.key()), it.value(), path + "/" + it.key(), out);
        order_b.push_back(it.key());
      }
    }
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()))
        out.push_back("extra " + path + "/" + it.key());
      else
        order_a.push_back(it.key());
    }
    if (order_a != order_b) out.push_back("key order differs at " + path);
  } else if (a.is_array() && b.is_array()) {
    if (a.size() != b.size())
      out.push_back("length " + path + ": " + std::to_string(a.size()) + " vs " +
                    std::to_string(b.size()));
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      walk(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    bool same_type = (a.is_number_integer() && b.is_number_integer()) ||
                     (a.is_number_float() && b.is_number_float()) || a.type() == b.type();
    if (same_type && a == b) return;
    if (a.is_number_float() && b.is_number_float() && ulp_tolerant(path)) {
      double x = a.get<double>(), y = b.get<double>();
      if (std::fabs(x - y) <= 4 * std::numeric_limits<double>::epsilon() * std::fabs(y)) return;
    }
    if (path.size() >= 14 && path.compare(path.size() - 14, 14, "/config_source") == 0 &&
        a.is_string() && b.is_string()) {
      std::string g = b.get<std::string>(), o = a.get<std::string>();
      std::string base = g.substr(g.rfind('/') + 1);
      if (o.size() >= base.size() && o.compare(o.size() - base.size(), base.size(), base) == 0)
        return;
    }
    if (path.rfind("configs/", 0) == 0 && function_display_matches(a, b)) return;
    out.push_back("value " + path + ": ours=" + a.dump() + " golden=" + b.dump());
  }
}

// Our samples file of `task` under the output folder (samples_<task>_<date>.jsonl).
inline fs::path find_samples(const fs::path& dir, const std::string& task) {
  std::string prefix = "samples_" + task + "_";
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 6 &&
        n.compare(n.size() - 6, 6, ".jsonl") == 0 &&
        n.find('_', prefix.size()) == std::string::npos)  // not samples_<task>_<sub>_...
      return e.path();
  }
  return {};
}

inline fs::path find_results(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind("results_", 0) == 0 && e.path().extension() == ".json") return e.path();
  }
  return {};
}

// One manifest entry and its test label (<run>_<N>shot or <run>_default).
struct GoldenRun {
  Json entry;
  std::string label;
};
// gtest prints a parameter in test listings; the label says which run it is.
inline void PrintTo(const GoldenRun& run, std::ostream* os) { *os << run.label; }

// The runs of a goldens manifest; one placeholder labelled `absent_label` when it is missing, so
// that the parameterised test exists and can skip with a message.
inline std::vector<GoldenRun> load_runs(const fs::path& manifest, const std::string& absent_label) {
  std::vector<GoldenRun> runs;
  if (manifest.empty() || !fs::exists(manifest)) {
    runs.push_back({Json(), absent_label});
    return runs;
  }
  std::ifstream in(manifest);
  Json m = Json::parse(in);
  for (const auto& e : m) {
    // num_fewshot is a number, or "task default" for runs made without --num_fewshot.
    const Json& nf = e.at("num_fewshot");
    std::string label =
        e.at("run").get<std::string>() + "_" +
        (nf.is_number_integer() ? std::to_string(nf.get<int>()) + "shot" : std::string("default"));
    runs.push_back({e, label});
  }
  return runs;
}

// The lm-eval command line that repeats a golden run with the hashfake model on `data_dir`.
inline std::string run_command_line(const Json& e, const fs::path& data_dir, const fs::path& out) {
  std::ostringstream cmd;
  cmd << lmeval_binary() << " run --model hashfake --model_args pretrained=hashfake"
      << " --tasks " << e.at("run").get<std::string>();
  if (e.at("num_fewshot").is_number_integer())
    cmd << " --num_fewshot " << e.at("num_fewshot").get<int>();
  if (e.at("limit").is_number_integer()) cmd << " --limit " << e.at("limit").get<int>();
  cmd << " --data_dir " << data_dir << " --log_samples --output_path " << out;
  return cmd.str();
}

// Differences between our outputs under `out` and the golden run `e` of `goldens`:
// every results key (the skipped ones aside), every golden sample record, and every golden
// request's arguments against those our samples record.
inline std::vector<std::string> diff_run(const Json& e, const fs::path& goldens,
                                         const fs::path& out) {
  std::vector<std::string> diffs;
  fs::path ours_path = find_results(out);
  if (ours_path.empty()) return {"no results file under " + out.string()};
  std::ifstream oin(ours_path), gin(goldens / e.at("results").get<std::string>());
  Json ours = Json::parse(oin), gold = Json::parse(gin);
  for (auto it = gold.begin(); it != gold.end(); ++it) {
    if (skipped_top_keys().count(it.key())) continue;
    if (!ours.contains(it.key())) {
      diffs.push_back("missing top-level " + it.key());
      continue;
    }
    walk(ours.at(it.key()), it.value(), it.key(), diffs);
  }

  bool group_run = e.at("samples").size() > 1 || e.at("tasks").size() > 1;
  for (const auto& sp : e.at("samples")) {
    fs::path gpath = goldens / sp.get<std::string>();
    std::string task = group_run ? gpath.stem().string() : e.at("tasks")[0].get<std::string>();
    fs::path spath = find_samples(out, task);
    if (spath.empty()) {
      diffs.push_back("no samples file for " + task);
      continue;
    }
    std::map<std::pair<int64_t, std::string>, Json> by_key;
    for (auto& row : read_jsonl(spath))
      by_key[{row.at("doc_id").get<int64_t>(), row.at("filter").get<std::string>()}] = row;
    for (const auto& g : read_jsonl(gpath)) {
      auto key = std::make_pair(g.at("doc_id").get<int64_t>(), g.at("filter").get<std::string>());
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        diffs.push_back(task + " samples: missing doc " + std::to_string(key.first));
        continue;
      }
      Json o = it->second;
      if (g.contains("arguments") && g.at("arguments") == "TRIMMED: see requests file")
        o["arguments"] = g.at("arguments");
      walk(o, g, "samples[" + task + "," + std::to_string(key.first) + "," + key.second + "]",
           diffs);
    }
  }
  // Requests (prompts, continuations, gen_kwargs) of every recorded document, byte for byte,
  // against the arguments our samples record (the golden samples keep them for few docs only).
  size_t requests_checked = 0;
  if (e.contains("requests") && e.at("requests").is_string()) {
    std::map<std::string, std::map<int64_t, Json>> ours_args;  // task -> doc_id -> arguments
    for (const auto& rq : read_jsonl(goldens / e.at("requests").get<std::string>())) {
      std::string task = rq.at("task").get<std::string>();
      if (!ours_args.count(task)) {
        auto& m = ours_args[task];
        fs::path spath = find_samples(out, task);
        if (!spath.empty())
          for (auto& row : read_jsonl(spath))
            m.emplace(row.at("doc_id").get<int64_t>(), row.at("arguments"));
      }
      int64_t doc_id = rq.at("doc_id").get<int64_t>();
      std::string where = "requests[" + task + "," + std::to_string(doc_id) + "," +
                          std::to_string(rq.at("idx").get<int>()) + "]";
      auto it = ours_args[task].find(doc_id);
      if (it == ours_args[task].end()) {
        diffs.push_back(where + ": no such document in our samples");
        continue;
      }
      std::string key = "gen_args_" + std::to_string(rq.at("idx").get<int>());
      if (!it->second.contains(key)) {
        diffs.push_back(where + ": no " + key);
        continue;
      }
      const Json& args = rq.at("arguments");
      for (size_t k = 0; k < args.size(); ++k)
        walk(it->second.at(key).at("arg_" + std::to_string(k)), args[k],
             where + "/arg_" + std::to_string(k), diffs);
      ++requests_checked;
    }
    if (requests_checked == 0) diffs.push_back("no golden requests compared");
  }
  return diffs;
}

// Differences between the requests our model received (LMEVAL_RECORD_REQUESTS file `ours`) and a
// golden requests file: each golden request at its position (`seq`) in the stream, key by key.
inline std::vector<std::string> diff_recorded_requests(const fs::path& ours, const fs::path& golden,
                                                       size_t* compared = nullptr) {
  std::vector<std::string> diffs;
  auto recorded = read_jsonl(ours);
  std::map<size_t, const Json*> by_seq;
  for (const auto& o : recorded) by_seq[o["seq"].get<size_t>()] = &o;
  for (const auto& want : read_jsonl(golden)) {
    auto it = by_seq.find(want["seq"].get<size_t>());
    if (it == by_seq.end()) {
      diffs.push_back("no request at seq " + want["seq"].dump());
      continue;
    }
    const Json& got = *it->second;
    for (const char* key :
         {"task", "doc_id", "idx", "request_type", "repeats", "metadata", "arguments"})
      if (got[key] != want[key])
        diffs.push_back("seq " + want["seq"].dump() + " key " + key +
                        "\n ours:   " + got[key].dump().substr(0, 800) +
                        "\n golden: " + want[key].dump().substr(0, 800));
    if (compared) ++*compared;
  }
  return diffs;
}

// The first `limit` differences, one a line, for a failure message.
inline std::string first_diffs(const std::vector<std::string>& diffs, size_t limit = 40) {
  std::ostringstream msg;
  for (size_t i = 0; i < diffs.size() && i < limit; ++i) msg << diffs[i] << "\n";
  return msg.str();
}

}  // namespace lmeval::testing::golden

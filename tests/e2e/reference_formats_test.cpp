// Whole runs over the small task set the spec authors ran through the reference itself
// (../shared/spec/tools/spec_core_dummy_tasks): prompts, few-shot draws, hashes, results layout.
// The reference's dummy model answers from Python's global random, so scores are not compared.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::read_file;

namespace {

const fs::path kSpecTasks = "spec/tools/spec_core_dummy_tasks";

// Copies the YAMLs into <work>/<sub>/ with DATA_DIR pointing at the shared data file.
void stage(const fs::path& work, const std::string& sub, const std::vector<std::string>& files) {
  fs::path src = lmeval::testing::shared_dir() / kSpecTasks;
  fs::create_directories(work / sub);
  for (const auto& f : files) {
    std::string text = read_file(src / f);
    text = std::regex_replace(text, std::regex("DATA_DIR"), src.string());
    std::ofstream(work / sub / f) << text;
  }
}

std::vector<fs::path> files_with(const fs::path& dir, const std::string& prefix,
                                 const std::string& ext) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && e.path().extension() == ext)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Json> jsonl(const fs::path& p) {
  std::vector<Json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

Json strip_paths(Json v, const std::string& data_dir) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    auto pos = s.find(data_dir);
    if (pos != std::string::npos) s.replace(pos, data_dir.size(), "DATA_DIR");
    return s;
  }
  if (v.is_object())
    for (auto& [k, x] : v.items()) x = strip_paths(x, data_dir);
  if (v.is_array())
    for (auto& x : v) x = strip_paths(x, data_dir);
  return v;
}

struct RunOutput {
  Json results;
  std::map<std::string, std::vector<Json>> samples;
};

RunOutput run_lmeval(const fs::path& work, const std::string& args) {
  fs::remove_all(work / "out");
  auto r = lmeval::testing::run_command("cd '" + work.string() + "' && '" +
                                        lmeval::testing::lmeval_binary().string() + "' " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  RunOutput run;
  auto res = files_with(work / "out", "res", ".json");
  if (res.empty()) return run;
  run.results = Json::parse(read_file(res[0]));
  for (const auto& s : files_with(work / "out", "samples_", ".jsonl")) {
    std::string name = s.filename().string().substr(8);
    name = name.substr(0, name.rfind('_'));
    run.samples[name] = jsonl(s);
  }
  return run;
}

RunOutput reference(const std::string& run_dir) {
  fs::path dir = lmeval::testing::shared_dir() / kSpecTasks / run_dir;
  RunOutput run;
  run.results = Json::parse(read_file(files_with(dir, "res", ".json").at(0)));
  for (const auto& s : files_with(dir, "samples_", ".jsonl")) {
    std::string name = s.filename().string().substr(8);
    name = name.substr(0, name.rfind('_'));
    run.samples[name] = jsonl(s);
  }
  return run;
}

}  // namespace

TEST(E2E_ReferenceFormats, GroupWithMcAndGenerationTasks) {
  LMEVAL_REQUIRE_SHARED(kSpecTasks / "run1_output");
  fs::path work = fs::temp_directory_path() / ("lmeval_e2e_run1_" + std::to_string(getpid()));
  stage(work, "t1", {"mc.yaml", "gen.yaml", "grp.yaml"});
  RunOutput ours = run_lmeval(
      work,
      "run --model dummy --tasks tgrp --include_path t1 --output_path out --log_samples --limit 4");
  RunOutput ref = reference("run1_output");
  ASSERT_TRUE(ours.results.is_object());
  std::string data_dir = (lmeval::testing::shared_dir() / kSpecTasks).string();
  for (const char* key :
       {"group_subtasks", "versions", "n-shot", "higher_is_better", "n-samples", "task_hashes"})
    EXPECT_EQ(ours.results[key], ref.results[key]) << key;
  EXPECT_EQ(strip_paths(ours.results["configs"], data_dir), ref.results["configs"]);
  // Same top-level keys in the same order (lm-eval's extra keys come after the reference's).
  std::vector<std::string> ok, rk;
  for (auto& [k, v] : ours.results.items()) ok.push_back(k);
  for (auto& [k, v] : ref.results.items()) rk.push_back(k);
  ok.resize(std::min(ok.size(), rk.size() + 2));
  for (size_t i = 0, j = 0; i < rk.size(); ++i) {
    while (j < ok.size() && ok[j] != rk[i] &&
           (ok[j] == "leaderboard_normalized" || ok[j] == "performance"))
      ++j;
    ASSERT_LT(j, ok.size());
    EXPECT_EQ(ok[j++], rk[i]);
  }
  for (auto& [task, lines] : ref.samples) {
    ASSERT_EQ(ours.samples[task].size(), lines.size()) << task;
    for (size_t i = 0; i < lines.size(); ++i) {
      const Json& o = ours.samples[task][i];
      const Json& r = lines[i];
      for (const char* key : {"doc_id", "doc", "target", "arguments", "filter", "metrics",
                              "doc_hash", "prompt_hash", "target_hash"})
        EXPECT_EQ(o[key], r[key]) << task << " line " << i << " key " << key;
    }
  }
  fs::remove_all(work);
}

TEST(E2E_ReferenceFormats, NestedGroupsAndNumFewshotOverride) {
  LMEVAL_REQUIRE_SHARED(kSpecTasks / "run2_output");
  fs::path work = fs::temp_directory_path() / ("lmeval_e2e_run2_" + std::to_string(getpid()));
  stage(work, "t2", {"mc.yaml", "inner.yaml", "outer.yaml"});
  RunOutput ours = run_lmeval(work,
                              "--model dummy --tasks gouter --include_path t2 --output_path "
                              "out/res.json --limit 3 --num_fewshot 1");
  RunOutput ref = reference("run2_output");
  ASSERT_TRUE(ours.results.is_object());
  for (const char* key : {"group_subtasks", "versions", "n-shot", "higher_is_better", "n-samples"})
    EXPECT_EQ(ours.results[key], ref.results[key]) << key;
  // The groups' structure (keys) matches; values depend on the model.
  for (const char* g : {"gouter", "ginner"}) {
    std::vector<std::string> a, b;
    for (auto& [k, v] : ours.results["results"][g].items()) a.push_back(k);
    for (auto& [k, v] : ref.results["results"][g].items()) b.push_back(k);
    EXPECT_EQ(a, b) << g;
  }
  fs::remove_all(work);
}

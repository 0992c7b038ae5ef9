// Real runs for the analysis tests, made with the built lm-eval and the dummy model (salt= gives
// different fake models): small multiple-choice tasks with local data, so nothing needs ../shared.
// ctest runs each test in its own process, so the runs are made once per lm-eval build into a
// folder keyed by the binaries' modification times, built aside and renamed into place (atomic, so
// parallel test processes never see half a set).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace lmeval::testing {

class AnalysisRuns : public ::testing::Test {
 public:
  static std::filesystem::path dir() {
    static const std::filesystem::path d = [] {
      // Keyed by both binaries: a rebuilt lm-eval or a changed fixture (this test binary) makes new
      // runs.
      auto stamp = [](const std::filesystem::path& p) {
        return std::to_string(std::filesystem::last_write_time(p).time_since_epoch().count() &
                              0xffffffffffffLL);
      };
      return std::filesystem::temp_directory_path() /
             ("lmeval_analysis_runs_" + stamp(lmeval_binary()) + "_" +
              stamp(std::filesystem::read_symlink("/proc/self/exe")));
    }();
    return building_.empty() ? d : building_;
  }
  static inline std::filesystem::path building_;

  static void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir() / rel).parent_path());
    std::ofstream(dir() / rel) << text;
  }

  static CommandResult lm(const std::string& args) {
    return run_command("cd '" + dir().string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                       lmeval_binary().string() + "' " + args);
  }

  // A run of the dummy model with the given salt into runs/<name>; extra flags appended.
  static void make_run(const std::string& name, const std::string& salt, const std::string& tasks,
                       const std::string& extra = "--log_samples") {
    auto r =
        lm("run --model dummy --model_args pretrained=model-" + salt + ",salt=" + salt +
           " --tasks " + tasks + " --include_path tasks --output_path runs/" + name + " " + extra);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  static std::string run(const std::string& name) { return (dir() / "runs" / name).string(); }

  static void SetUpTestSuite() {
    const std::filesystem::path final_dir = dir();
    if (std::filesystem::exists(final_dir / "runs")) return;
    building_ = final_dir.string() + ".building" + std::to_string(getpid());
    std::filesystem::remove_all(building_);
    std::filesystem::create_directories(building_);
    make_all_runs();
    std::error_code ec;
    std::filesystem::rename(building_, final_dir, ec);  // another process may have won the race
    if (ec) std::filesystem::remove_all(building_);
    building_.clear();
  }

  static void make_all_runs() {
    for (const char* t : {"qa_one", "qa_two", "qa_other", "qa_clustered"}) {
      std::string data;
      for (int i = 0; i < 150; ++i)
        data += "{\"q\": \"" + std::string(t) + " question " + std::to_string(i) +
                "?\", \"topic\": \"t" + std::to_string(i % 13) +
                "\", \"choices\": [\"red\", \"green\", \"blue\", \"yellow\"], \"label\": " +
                std::to_string(i % 4) + "}\n";
      write(std::string("data/") + t + ".jsonl", data);
      write(std::string("tasks/") + t + ".yaml",
            std::string("task: ") + t +
                "\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                (dir() / "data" / (std::string(t) + ".jsonl")).string() +
                "\noutput_type: multiple_choice\ntest_split: test\nfewshot_split: test\n"
                "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\ndoc_to_target: label\n"
                "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
                "  - metric: acc_norm\n    aggregation: mean\n    higher_is_better: "
                "true\nmetadata:\n  version: 1.0\n" +
                (std::string(t) == "qa_clustered" ? "cluster_key: \"{{topic}}\"\n" : ""));
    }
    {
      // 1,000 documents: the sample browser's size test (report_test).
      std::string data;
      for (int i = 0; i < 1000; ++i)
        data += "{\"q\": \"big question " + std::to_string(i) +
                "?\", \"choices\": [\"red\", \"green\", \"blue\", \"yellow\"], \"label\": " +
                std::to_string(i % 4) + "}\n";
      write("data/qa_big.jsonl", data);
      write("tasks/qa_big.yaml",
            "task: qa_big\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                (dir() / "data/qa_big.jsonl").string() +
                "\noutput_type: multiple_choice\ntest_split: test\n"
                "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\ndoc_to_target: label\n"
                "metric_list:\n  - metric: acc\nmetadata:\n  version: 1.0\n");
    }
    write(
        "tasks/qa_group.yaml",
        "group: qa_group\ntask:\n  - qa_one\n  - qa_two\naggregate_metric_list:\n  - metric: acc\n"
        "    weight_by_size: true\nmetadata:\n  version: 1.0\n");
    make_run("a", "a", "qa_group");
    make_run("b", "b", "qa_group");
    make_run("c", "c", "qa_group");
    make_run("a_again", "a", "qa_group");
    make_run("b_fewshot", "b", "qa_group", "--log_samples --num_fewshot 1");
    make_run("b_limit", "b", "qa_group", "--log_samples --limit 40");
    make_run("small_a", "a", "qa_one", "--log_samples --limit 40");
    make_run("small_b", "b", "qa_one", "--log_samples --limit 40");
    make_run("other", "b", "qa_other");
    make_run("no_samples", "b", "qa_group", "");
    make_run("clustered_a", "a", "qa_clustered");
    make_run("clustered_b", "b", "qa_clustered");
    make_run("clustered_c", "c", "qa_clustered");
    make_run("seeds_a", "a", "qa_one", "--log_samples --num_fewshot 1 --fewshot_seeds 1234,1,2");
    make_run("seeds_b", "b", "qa_one", "--log_samples --num_fewshot 1 --fewshot_seeds 1234,1,2");
    make_run("big_a", "a", "qa_big");
    make_run("big_b", "b", "qa_big");
  }

  // The results file of a run folder (runs/<name>/<model>/results_*.json).
  static std::filesystem::path results_file(const std::string& name) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir() / "runs" / name))
      if (e.path().filename().string().starts_with("results_")) return e.path();
    return {};
  }

  // Per-item acc of a run's samples file for `task`, read here independently of src/analysis.
  static std::map<std::string, double> item_scores(const std::string& name, const std::string& task,
                                                   const std::string& metric = "acc") {
    std::map<std::string, double> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir() / "runs" / name)) {
      if (!e.path().filename().string().starts_with("samples_" + task + "_")) continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line);
        out[j["doc_hash"].get<std::string>()] = j[metric].get<double>();
      }
    }
    return out;
  }
};

}  // namespace lmeval::testing

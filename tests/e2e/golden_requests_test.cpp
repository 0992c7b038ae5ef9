// Requests byte for byte against the reference's (../shared/goldens/requests): every kept request
// of every golden run — context, continuation or gen_kwargs, request type, idx, and the position
// in the stream the model receives — recorded through LMEVAL_RECORD_REQUESTS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e/golden_compare.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

struct GoldenRequests {
  std::string task;
  std::string shots;  // "0", "25", "default"
  fs::path file;
};

std::vector<GoldenRequests> golden_request_files() {
  std::vector<GoldenRequests> out;
  fs::path root = lmeval::testing::shared_dir() / "goldens/requests";
  if (!fs::exists(root)) return out;
  for (const auto& dir : fs::directory_iterator(root))
    for (const auto& f : fs::directory_iterator(dir.path())) {
      std::string stem = f.path().stem().string();
      std::string shots = stem == "default" ? "default" : stem.substr(0, stem.find("shot"));
      out.push_back({dir.path().filename().string(), shots, f.path()});
    }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

// Small runs by default; the big groups only with LMEVAL_SLOW_TESTS=1.
bool is_big(const std::string& task) {
  return task == "mmlu" || task == "leaderboard_bbh" || task == "leaderboard_mmlu_pro";
}

}  // namespace

TEST(E2E_GoldenRequests, ByteIdenticalToTheReference) {
  LMEVAL_REQUIRE_SHARED("goldens/requests");
  auto runs = golden_request_files();
  ASSERT_FALSE(runs.empty());
  bool slow = std::getenv("LMEVAL_SLOW_TESTS") != nullptr;
  size_t compared_runs = 0, compared = 0;
  for (const auto& g : runs) {
    if (is_big(g.task) && !slow) continue;
    SCOPED_TRACE(g.task + " " + g.shots);
    fs::path rec =
        fs::temp_directory_path() / ("lmeval_req_" + std::to_string(getpid()) + ".jsonl");
    std::string cmd = "LMEVAL_RECORD_REQUESTS='" + rec.string() + "' '" +
                      lmeval::testing::lmeval_binary().string() +
                      "' run --model dummy --model_args pretrained=hashfake --tasks " + g.task +
                      (g.shots == "default" ? "" : " --num_fewshot " + g.shots) +
                      " --limit 100 --data_dir '" +
                      (lmeval::testing::shared_dir() / "hf_data").string() + "'";
    auto r = lmeval::testing::run_command(cmd);
    if (r.exit_code != 0) {
      ADD_FAILURE() << "run failed: " << r.err.substr(0, 2000);
      continue;
    }
    auto diffs = lmeval::testing::golden::diff_recorded_requests(rec, g.file, &compared);
    fs::remove(rec);
    EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences:\n"
                               << lmeval::testing::golden::first_diffs(diffs, 3);
    ++compared_runs;
  }
  EXPECT_GT(compared_runs, 10u);
  std::cout << "compared " << compared << " requests of " << compared_runs << " golden runs\n";
}

// `lm-eval merge` on the parts a user really has: a folder of parts, a damaged part (named with
// the field at fault), an impossible shard label, a part that lost an answer (blamed on that
// part, not on the first one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::read_file;
using lmeval::testing::run_command;

namespace {

class MergeParts : public ::testing::Test {
 protected:
  lmeval::testing::CommandResult lm(const std::string& args) {
    return run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                       lmeval::testing::lmeval_binary().string() + "' " + args);
  }
  // Runs the demo task in `n` shards into dir_/parts.
  void make_parts(int n) {
    for (int i = 1; i <= n; ++i)
      ASSERT_EQ(lm("run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze "
                   "--log_samples --shard " +
                   std::to_string(i) + "/" + std::to_string(n) + " --output_path parts")
                    .exit_code,
                0);
  }
  Json part(const std::string& name) { return Json::parse(read_file(dir_ / "parts" / name)); }
  void save(const std::string& name, const Json& j) {
    std::ofstream(dir_ / "parts" / name) << j.dump();
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_mergeparts"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(MergeParts, FolderOfPartsMergesLikeTheFiles) {
  make_parts(3);
  auto whole =
      lm("run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --log_samples "
         "--output_path whole");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  auto r = lm("merge parts --output_path merged");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lmeval::testing::results_without_timings(dir_ / "merged"),
            lmeval::testing::results_without_timings(dir_ / "whole"));
  EXPECT_EQ(lmeval::testing::samples_of(dir_ / "merged", "demo_story_cloze"),
            lmeval::testing::samples_of(dir_ / "whole", "demo_story_cloze"));

  fs::create_directories(dir_ / "empty");
  auto e = lm("merge empty --output_path m2");
  EXPECT_EQ(e.exit_code, 2) << e.err;
  EXPECT_NE(e.err.find("folder empty holds no shard_<I>of<N>.json file"), std::string::npos)
      << e.err;
}

TEST_F(MergeParts, MalformedPartNamesFileAndField) {
  make_parts(2);
  Json p = part("shard_2of2.json");
  p["calls"] = "oops";
  save("shard_2of2.json", p);
  auto r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("parts/shard_2of2.json: calls: `calls` is a string (expected an array)"),
            std::string::npos)
      << r.err;

  // Issue 32: "`shard` is an array (expected an array [I, N] of two integers)".
  make_parts(2);
  p = part("shard_2of2.json");
  p["shard"] = Json::array({2, 2, 7});
  save("shard_2of2.json", p);
  r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("parts/shard_2of2.json: shard: `shard` is an array of 3 items, [2,2,7] "
                       "(expected an array [I, N] of two integers)"),
            std::string::npos)
      << r.err;

  make_parts(2);  // well-formed parts again
  p = part("shard_2of2.json");
  p["calls"][0]["answers"][0][2] = "not a pair";
  save("shard_2of2.json", p);
  r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(
      r.err.find(
          "parts/shard_2of2.json: calls[0].answers[0][2]: `calls[0].answers[0][2]` is a string"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("expected [log-likelihood, is_greedy]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "m"));
}

TEST_F(MergeParts, ImpossibleShardLabelIsInvalidNotMissing) {
  make_parts(3);
  Json p = part("shard_1of3.json");
  p["shard"] = {5, 3};
  save("shard_1of3.json", p);
  auto r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(
      r.err.find(
          "parts/shard_1of3.json: shard: invalid shard label 5/3 (expected I/N with 1 <= I <= N)"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("parts missing"), std::string::npos) << r.err;
}

// Shard 2 lost answers: with its own count of requests intact it is caught by that count; with
// the count edited too, by where the hole lies (inside shard 2's run of requests, or a part with
// no answers at all between shards 1 and 3).
TEST_F(MergeParts, MissingAnswerIsBlamedOnItsShard) {
  make_parts(3);
  const Json original = part("shard_2of3.json");
  ASSERT_GE(original["calls"][0]["answers"].size(), 3u);

  Json p = original;
  p["calls"][0]["answers"].erase(1);
  save("shard_2of3.json", p);
  auto r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  size_t n = original["calls"][0]["answers"].size();
  EXPECT_NE(
      r.err.find("parts/shard_2of3.json: calls[0].answers: part 2 holds " + std::to_string(n - 1) +
                 " answers of its " + std::to_string(n) + " loglikelihood requests"),
      std::string::npos)
      << r.err;

  p["calls"][0]["shard_requests"] = n - 1;
  save("shard_2of3.json", p);
  r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(
      r.err.find("parts/shard_2of3.json: calls[0].answers: no part answered loglikelihood request"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("part 2/3's range"), std::string::npos) << r.err;

  p = original;
  p["calls"][0]["answers"] = Json::array();
  p["calls"][0]["shard_requests"] = 0;
  save("shard_2of3.json", p);
  r = lm("merge parts --output_path m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("parts/shard_2of3.json: calls[0].answers: no part answered"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "m"));
}

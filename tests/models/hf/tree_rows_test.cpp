// The device path's prefix trees (tree_rows.cpp: one row per tree under a tree mask; what CUDA
// runs) against the batch-invariant float32 path, which is itself checked against transformers
// (transformer_test.cpp): run on the CPU in float32 through LoadOptions::device_path.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Trees from the golden inputs of a fixture: prefixes of several lengths, each with branches of
// different lengths (one empty), every position from the prefix's last token on scored.
std::vector<ScoreTree> make_trees(const fs::path& dir) {
  json golden = json::parse(lmeval::testing::read_file(dir / "golden.json"));
  std::vector<ScoreTree> trees;
  for (const auto& in : golden["inputs"]) {
    auto ids = in["input_ids"].get<std::vector<Token>>();
    if (ids.size() < 8) continue;
    for (size_t P : {size_t{3}, ids.size() / 2}) {
      ScoreTree t{std::vector<Token>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(P)),
                  {}};
      for (size_t n : {size_t{0}, size_t{1}, ids.size() - P - 1, size_t{2}}) {
        std::vector<Token> branch(ids.begin() + static_cast<std::ptrdiff_t>(P),
                                  ids.begin() + static_cast<std::ptrdiff_t>(P + n));
        // Targets: the branch's own tokens shifted by one, plus the token after it.
        std::vector<Token> targets(ids.begin() + static_cast<std::ptrdiff_t>(P),
                                   ids.begin() + static_cast<std::ptrdiff_t>(P + n + 1));
        t.branches.push_back({branch, {ScoreSpan{static_cast<int64_t>(P) - 1, targets}}});
      }
      trees.push_back(std::move(t));
    }
  }
  return trees;
}

void expect_paths_agree(const fs::path& dir, const std::string& name) {
  auto trees = make_trees(dir);
  ASSERT_FALSE(trees.empty()) << name;
  LoadOptions opt;
  opt.dtype = "float32";  // the fixtures' checkpoints are float16
  auto invariant = Transformer::load(dir, opt);
  ASSERT_TRUE(invariant->batch_invariant()) << name;
  opt.device_path = true;
  auto device = Transformer::load(dir, opt);
  ASSERT_FALSE(device->batch_invariant()) << name;
  ASSERT_TRUE(device->shares_prefixes()) << name;
  auto want = invariant->score_trees(trees);
  auto got = device->score_trees(trees);  // all trees in one padded batch
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < trees.size(); ++i)
    for (size_t j = 0; j < trees[i].branches.size(); ++j) {
      const SpanScore& a = want[i][j][0];
      const SpanScore& b = got[i][j][0];
      worst = std::max(worst, std::abs(a.logprob - b.logprob));
      EXPECT_EQ(a.is_greedy, b.is_greedy) << name << " tree " << i << " branch " << j;
    }
  EXPECT_LT(worst, 1e-4) << name;
  // One tree at a time gives the same scores as the whole batch (padding does not leak).
  for (size_t i = 0; i < trees.size(); ++i) {
    auto one = device->score_trees({trees[i]});
    for (size_t j = 0; j < trees[i].branches.size(); ++j)
      EXPECT_NEAR(one[0][j][0].logprob, got[i][j][0].logprob, 1e-4) << name << " tree " << i;
  }
}

class TreeRowsFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TreeRowsFixture, DevicePathMatchesTheInvariantPath) {
  LMEVAL_REQUIRE_SHARED("fixtures/" + GetParam() + "/golden.json");
  expect_paths_agree(lmeval::testing::shared_dir() / "fixtures" / GetParam(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(HfTreeRows, TreeRowsFixture,
                         ::testing::Values("llama", "mistral", "qwen3", "gpt_neox_parallel", "gpt2",
                                           "phi", "gemma2", "opt"),
                         [](const auto& info) { return info.param; });

// The architectures of tests/fixtures/hf_arch (scripts/gen_hf_arch_fixtures.py) with static
// rotary frequencies.
class TreeRowsArchFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TreeRowsArchFixture, DevicePathMatchesTheInvariantPath) {
  expect_paths_agree(lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / GetParam(),
                     GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    HfTreeRowsArch, TreeRowsArchFixture,
    ::testing::Values("granite", "smollm3", "olmo2", "starcoder2", "mixtral", "qwen2_moe",
                      "qwen3_moe", "olmoe", "gemma3", "olmo3", "gptj", "cohere", "stablelm",
                      "cohere2", "exaone4", "glm4", "ernie4_5", "falcon_7b", "falcon_40b",
                      "falcon_seq", "gpt_bigcode", "gpt_bigcode_mha", "deepseek_v2",
                      "deepseek_v2_yarn", "deepseek_v3", "deepseek_v3_yarn", "llama4", "bloom",
                      "bloom_6heads", "mpt", "mpt_scaled", "falcon_rw", "gpt_oss", "gpt_oss_mxfp4"),
    [](const auto& info) { return info.param; });

// Sliding windows inside a tree: the window counts positions (a branch token's distance to a
// prefix token is by position, not by its place in the row). Mistral with an 8-token window.
TEST(HfTreeRows, SlidingWindowCountsPositionsNotRowPlaces) {
  LMEVAL_REQUIRE_SHARED("fixtures/mistral/golden.json");
  const fs::path src = lmeval::testing::shared_dir() / "fixtures" / "mistral";
  const fs::path dir =
      fs::temp_directory_path() / ("lmeval_tree_window_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src))
    fs::copy_file(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
  json cfg = json::parse(lmeval::testing::read_file(dir / "config.json"));
  cfg["sliding_window"] = 8;
  fs::permissions(dir / "config.json", fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(dir / "config.json") << cfg.dump();
  expect_paths_agree(dir, "mistral window 8");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lmeval::hf

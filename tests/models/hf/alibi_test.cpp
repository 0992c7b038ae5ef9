// ALiBi's slopes and biases (models/hf/alibi.hpp) against transformers' own numbers
// (tests/fixtures/hf_arch/alibi_slopes.json, scripts/gen_alibi_slopes_goldens.py).
#include "models/hf/alibi.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;

json goldens() {
  return json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() / "tests" /
                                                "fixtures" / "hf_arch" / "alibi_slopes.json"));
}

// Slopes from irrational bases may differ in the last bit (torch's float pow); one ulp at most.
void expect_slopes(const std::vector<float>& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const auto w = want[i].get<float>();
    EXPECT_LE(std::abs(got[i] - w), std::nextafter(w, 1.0f) - w) << what << " head " << i;
  }
}

TEST(HfAlibi, BloomSlopesMatchTransformersForAnyHeadCount) {
  json g = goldens();
  for (const auto& [heads, want] : g["bloom"].items())
    expect_slopes(alibi_slopes_bloom(std::stoll(heads)), want, "bloom " + heads);
}

TEST(HfAlibi, MptSlopesMatchTransformersForAnyHeadCountAndBiasMax) {
  json g = goldens();
  for (const auto& [key, want] : g["mpt"].items()) {
    const auto colon = key.find(':');
    expect_slopes(
        alibi_slopes_mpt(std::stoll(key.substr(0, colon)), std::stod(key.substr(colon + 1))), want,
        "mpt " + key);
  }
}

TEST(HfAlibi, FalconBiasIsRoundedThroughBfloat16AsTransformersBuildsIt) {
  json g = goldens();
  for (const auto& [heads, entry] : g["falcon_bias"].items()) {
    ArchConfig c;
    c.num_heads = std::stoll(heads);
    c.head_dim = 16;
    c.alibi = Alibi::kKeyPositionBf16;
    c.alibi_slopes = alibi_slopes_bloom(c.num_heads);
    const auto positions = entry["positions"].get<std::vector<int64_t>>();
    for (int64_t h = 0; h < c.num_heads; ++h)
      for (size_t i = 0; i < positions.size(); ++i) {
        // FalconModel divides build_alibi_tensor's bias by sqrt(head_dim) = 4 here.
        const float want = entry["bias"][h][i].get<float>() / 4.0f;
        EXPECT_EQ(alibi_bias(c, h, positions[i], 0), want)
            << "heads " << heads << " head " << h << " position " << positions[i];
      }
  }
  // Without the rounding the bias of a large position would differ: the golden is not trivial.
  EXPECT_NE(round_to_bfloat16(0.70710677f * 777.0f), 0.70710677f * 777.0f);
}

TEST(HfAlibi, MptBiasCountsFromTheLastKeyAndBloomFromPositionZero) {
  ArchConfig c;
  c.alibi_slopes = {0.5f};
  c.alibi = Alibi::kFromLastKey;
  EXPECT_EQ(alibi_bias(c, 0, 3, 10), -3.5f);
  EXPECT_EQ(alibi_bias(c, 0, 10, 10), 0.0f);
  c.alibi = Alibi::kKeyPosition;
  EXPECT_EQ(alibi_bias(c, 0, 3, 10), 1.5f);
}

}  // namespace
}  // namespace lmeval::hf

// rope.hpp's rotate_pairs_polar against torch's complex64 products over runs of n numbers
// (tests/fixtures/hf_arch/polar_rope.json, scripts/gen_polar_rope_goldens.py): every output's
// bits, each pair rotated on its own at its index in the run, and whole runs rotated at once.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "half_bits.hpp"
#include "models/hf/rope.hpp"

namespace lmeval::hf {
namespace {

std::vector<float> floats(const nlohmann::json& bits) {
  std::vector<float> v;
  for (const auto& b : bits) v.push_back(std::bit_cast<float>(b.get<uint32_t>()));
  return v;
}

const nlohmann::json& goldens() { return half_bits::golden("polar_rope.json"); }

// The outputs of row r's run of n rotated in chunks of `chunk` pairs, differing bits counted.
int64_t differing(const nlohmann::json& c, int64_t chunk) {
  const int64_t n = c["n"].get<int64_t>(), rows = goldens()["meta"]["rows"].get<int64_t>();
  std::vector<float> x = floats(c["x"]);
  const std::vector<float> cs = floats(c["cos"]), sn = floats(c["sin"]), want = floats(c["out"]);
  EXPECT_EQ(static_cast<int64_t>(x.size()), rows * n * 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = 0; e < n; e += chunk)
      rotate_pairs_polar(x.data() + 2 * (r * n + e), cs.data() + r * n + e, sn.data() + r * n + e,
                         std::min(chunk, n - e), e, n);
  int64_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i)
    bad += std::bit_cast<uint32_t>(x[i]) != std::bit_cast<uint32_t>(want[i]);
  return bad;
}

TEST(HfPolarRope, EveryPairHasTorchsBits) {
  ASSERT_EQ(goldens()["cases"].size(), 13U);
  for (const auto& c : goldens()["cases"]) {
    EXPECT_EQ(differing(c, 1), 0) << "run of " << c["n"];
    EXPECT_EQ(differing(c, c["n"].get<int64_t>()), 0) << "run of " << c["n"];
  }
}

// The goldens tell the orders apart: a run rounded as if all of it were vectorized (as a run of
// 8 is) differs from torch's where a remainder takes fused multiply-adds.
TEST(HfPolarRope, TheScalarRemainderIsFused) {
  int64_t apart = 0;
  for (const auto& c : goldens()["cases"]) {
    const int64_t n = c["n"].get<int64_t>(), rows = goldens()["meta"]["rows"].get<int64_t>();
    std::vector<float> x = floats(c["x"]);
    const std::vector<float> cs = floats(c["cos"]), sn = floats(c["sin"]), want = floats(c["out"]);
    for (int64_t r = 0; r < rows; ++r)
      rotate_pairs_polar(x.data() + 2 * r * n, cs.data() + r * n, sn.data() + r * n, n, 0, 8);
    for (size_t i = 0; i < x.size(); ++i)
      apart += std::bit_cast<uint32_t>(x[i]) != std::bit_cast<uint32_t>(want[i]);
  }
  EXPECT_GT(apart, 100);
}

}  // namespace
}  // namespace lmeval::hf

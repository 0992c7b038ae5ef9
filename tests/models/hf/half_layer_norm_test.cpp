// half_layer_norm's float16/bfloat16 LayerNorm (and CohereLayerNorm's formula) against torch's own
// (tests/fixtures/hf_arch/half_layer_norm.json, scripts/gen_half_layer_norm_goldens.py): the same
// inputs, made from the element index and a seed on both sides, and the output bits compared.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "half_bits.hpp"
#include "models/hf/half_layer_norm.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;

const json& goldens() { return half_bits::golden("half_layer_norm.json"); }

TEST(HalfLayerNorm, RowsHaveTorchsBits) {
  ASSERT_FALSE(goldens()["cases"].empty());
  const double eps = goldens()["meta"]["eps"].get<double>();
  for (const json& c : goldens()["cases"]) {
    const std::string what = c.dump().substr(0, 80);
    const at::ScalarType dt = c["dtype"] == "float16" ? at::kHalf : at::kBFloat16;
    const auto rows = c["rows"].get<int64_t>(), n = c["width"].get<int64_t>();
    const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
    // gen_half_layer_norm_goldens.py's meta: x = operand * 64, w = operand * 16 + 1, b = operand.
    const at::Tensor x = half_bits::operand({rows, n}, seeds[0], dt) * 64;
    at::Tensor w, b;
    if (c["affine"].get<bool>()) {
      w = (half_bits::operand({n}, seeds[1], at::kDouble) * 16 + 1).to(dt);
      b = half_bits::operand({n}, seeds[2], dt);
    }
    // "formula": CohereLayerNorm's, weight only, as transformer_impl.hpp's norm() composes it.
    const bool formula = c.value("formula", false);
    const at::Tensor y = formula ? (w.defined() ? normalized_by_formula(x, eps) * w.to(at::kFloat)
                                                : normalized_by_formula(x, eps))
                                       .to(dt)
                                 : layer_norm_half(x, w, b, eps);
    ASSERT_EQ(y.scalar_type(), dt) << what;
    const std::vector<uint16_t> bits = half_bits::bits_of(y);
    ASSERT_EQ(static_cast<int64_t>(bits.size()), rows * n) << what;
    for (const json& d : c["differ_from_f32"])
      EXPECT_EQ(bits[d[0].get<size_t>()], d[1].get<uint16_t>()) << what << " output " << d[0];
    EXPECT_EQ(half_bits::fnv1a64(bits), c["hash"].get<std::string>()) << what;
  }
}

// The formula's sums on their own: torch.sum's float32 row sums as bit patterns. The script counts
// how many of its rows a left-to-right sum gets wrong (most), so the order is what this checks.
TEST(HalfLayerNorm, InnerSumIsTorchs) {
  ASSERT_FALSE(goldens()["sums"].empty());
  for (const json& c : goldens()["sums"]) {
    const auto rows = c["rows"].get<int64_t>(), n = c["width"].get<int64_t>();
    const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
    // gen_half_layer_norm_goldens.py's sum_cases: x = a + b * 2^-11 in float32.
    const at::Tensor x =
        (half_bits::operand({rows, n}, seeds[0], at::kFloat) +
         half_bits::operand({rows, n}, seeds[1], at::kFloat) * std::ldexp(1.0, -11))
            .contiguous();
    const auto want = c["bits"].get<std::vector<uint32_t>>();
    ASSERT_EQ(static_cast<int64_t>(want.size()), rows);
    for (int64_t r = 0; r < rows; ++r) {
      const float got = torch_inner_sum(x.data_ptr<float>() + r * n, n);
      uint32_t got_bits = 0;
      std::memcpy(&got_bits, &got, sizeof got);
      EXPECT_EQ(got_bits, want[static_cast<size_t>(r)]) << "width " << n << " row " << r;
    }
  }
}

}  // namespace
}  // namespace lmeval::hf

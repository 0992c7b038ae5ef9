// half_gemm's float16/bfloat16 products against torch's own (tests/fixtures/hf_arch/half_gemm.json,
// scripts/gen_half_gemm_goldens.py): the same operands, made from the element index and a seed
// on both sides, and the output bits compared, those where torch differs from the float32
// product rounded once one by one and all of them through a hash.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "half_bits.hpp"
#include "models/hf/half_gemm.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;

const json& goldens() { return half_bits::golden("half_gemm.json"); }

at::ScalarType dtype_of(const std::string& name) {
  return name == "float16" ? at::kHalf : at::kBFloat16;
}

using half_bits::bits_of;
using half_bits::fnv1a64;
using half_bits::operand;

at::Tensor compute(const json& c) {
  const at::ScalarType dt = dtype_of(c["dtype"]);
  const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
  if (c["op"] == "linear") {
    const auto w = c["w"].get<std::vector<int64_t>>();
    return half_gemm::linear(operand(c["x"].get<std::vector<int64_t>>(), seeds[0], dt),
                             operand(w, seeds[1], dt),
                             c["bias"].get<bool>() ? operand({w[0]}, seeds[2], dt) : at::Tensor());
  }
  std::vector<int64_t> bshape = c["b"].get<std::vector<int64_t>>();
  at::Tensor b;
  if (c["transposed"].get<bool>()) {
    std::swap(bshape[bshape.size() - 1], bshape[bshape.size() - 2]);
    b = operand(bshape, seeds[1], dt).transpose(-1, -2);
  } else {
    b = operand(bshape, seeds[1], dt);
  }
  return half_gemm::matmul(operand(c["a"].get<std::vector<int64_t>>(), seeds[0], dt), b);
}

TEST(HalfGemm, ProductsHaveTorchsBits) {
  int order_dependent = 0;
  for (const json& c : goldens()["cases"]) {
    const std::string what = c.dump().substr(0, 120);
    const at::Tensor got = compute(c);
    EXPECT_EQ(got.scalar_type(), dtype_of(c["dtype"])) << what;
    const std::vector<uint16_t> bits = bits_of(got);
    ASSERT_EQ(static_cast<int64_t>(bits.size()), c["outputs"].get<int64_t>()) << what;
    for (const json& d : c["differ_from_f32"]) {
      const size_t j = d[0].get<size_t>();
      EXPECT_EQ(bits[j], d[1].get<uint16_t>()) << what << " output " << j;
      ++order_dependent;
    }
    const auto first = c["first"].get<std::vector<uint16_t>>();
    for (size_t j = 0; j < first.size(); ++j)
      EXPECT_EQ(bits[j], first[j]) << what << " output " << j;
    EXPECT_EQ(fnv1a64(bits), c["hash"].get<std::string>()) << what;
  }
  // The goldens hold outputs that the float32 product rounded once gets wrong.
  EXPECT_GT(order_dependent, 20);
}

TEST(HalfGemm, DotTakesTorchsOrderOnAHandMadeCase) {
  // 1, 2^-24, 2^-24 as products 0, 1 and 9: products 1 and 9 share lane 1 of registers 0 and 1,
  // which add before the lanes do, so they reach 1 as 2^-23 and survive; a left-to-right sum
  // drops each 2^-24 against 1.
  std::vector<float> a(64, 0.0f), b(64, 1.0f);
  a[0] = 1.0f;
  a[1] = std::ldexp(1.0f, -24);
  a[9] = std::ldexp(1.0f, -24);
  EXPECT_EQ(half_gemm::dot(a.data(), b.data(), 64), 1.0f + std::ldexp(1.0f, -23));
  float left_to_right = 0.0f;
  for (int i = 0; i < 64; ++i) left_to_right += a[i] * b[i];
  EXPECT_EQ(left_to_right, 1.0f);
}

}  // namespace
}  // namespace lmeval::hf

// The feed-forward activations against torch's own (tests/fixtures/hf_arch/activations.json,
// scripts/gen_activation_goldens.py): every finite float16 and bfloat16 value through
// activation.cpp, the output bits compared, those where torch differs from the function computed
// in float32 and rounded once one by one and all of them through a hash.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "half_bits.hpp"
#include "models/hf/activation.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;

const json& goldens() { return half_bits::golden("activations.json"); }

Activation activation_of(const std::string& name) {
  if (name == "silu") return Activation::kSilu;
  if (name == "gelu") return Activation::kGeluExact;
  if (name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "gelu_new") return Activation::kGeluNew;
  if (name == "gelu_fast") return Activation::kGeluFast;
  if (name == "relu") return Activation::kRelu;
  return Activation::kGeluBloom;
}

// gen_activation_goldens.py's inputs(): the bit patterns 0x0000..0xFFFF that are finite.
at::Tensor every_value(at::ScalarType dt) {
  const at::Tensor all = at::arange(0, 1 << 16, at::kInt).to(at::kShort).view(dt);
  return all.index({at::isfinite(all.to(at::kFloat))});
}

using half_bits::bits_of;
using half_bits::fnv1a64;

TEST(HfActivation, EveryHalfValueHasTorchsBits) {
  ASSERT_FALSE(goldens()["cases"].empty());
  for (const auto& c : goldens()["cases"]) {
    const std::string name = c["name"], dtype = c["dtype"];
    const at::ScalarType dt = dtype == "float16" ? at::kHalf : at::kBFloat16;
    const at::Tensor x = every_value(dt);
    ASSERT_EQ(x.numel(), c["inputs"].get<int64_t>()) << dtype;
    const at::Tensor y = activate(x, activation_of(name));
    ASSERT_EQ(y.scalar_type(), dt) << name << " " << dtype;
    const std::vector<uint16_t> got = bits_of(y);
    int wrong = 0;
    for (const auto& d : c["first_differing"]) {
      const auto j = d[0].get<size_t>();
      const auto want = d[1].get<uint16_t>();
      if (got[j] != want && ++wrong <= 3)
        ADD_FAILURE() << name << " " << dtype << " input #" << j << ": bits " << got[j]
                      << ", torch's " << want;
    }
    EXPECT_EQ(fnv1a64(got), c["hash"].get<std::string>()) << name << " " << dtype;
  }
}

// float32: the same formulas in float32 (prefix_forward.cpp's scalar one against the ATen one).
TEST(HfActivation, ScalarFormulasFollowTheTensorOnes) {
  const at::Tensor x = at::linspace(-6.0, 6.0, 4097, at::kFloat);
  for (Activation a :
       {Activation::kSilu, Activation::kGeluTanh, Activation::kGeluExact, Activation::kRelu,
        Activation::kGeluNew, Activation::kGeluFast, Activation::kGeluBloom}) {
    const at::Tensor y = activate(x, a);
    const float* xp = x.data_ptr<float>();
    const float* yp = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i)
      ASSERT_NEAR(activate(a, xp[i]), yp[i], 1e-6f * (1.0f + std::abs(yp[i])))
          << static_cast<int>(a) << " at " << xp[i];
  }
}

}  // namespace
}  // namespace lmeval::hf

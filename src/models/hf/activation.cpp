// Activations as transformers computes them (activation.hpp).
#include "models/hf/activation.hpp"

#include <cmath>

#include "models/hf/reduced_precision.hpp"

namespace lmeval::hf {

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // math.sqrt(2.0 / math.pi)

// The Python formulas' operations as torch 2.15 computes them on a float16/bfloat16 tensor (the
// libtorch lm-eval links may be older, with other half kernels, so they are spelled out in
// float32 with a rounding to the dtype after each): every operation in float32, a Python float
// kept in float32, the result rounded; pow(x, 3.0) is x * x * x rounded after each product in
// bfloat16 but once in float16 (checked on every value of both dtypes against torch 2.15,
// scripts/gen_activation_goldens.py). In float32 these are the plain float32 operations.
struct HalfOps {
  at::ScalarType dt;
  bool reduced;
  at::Tensor r(const at::Tensor& t) const { return reduced ? t.to(dt).to(at::kFloat) : t; }
  at::Tensor cube(const at::Tensor& f) const {
    return dt == at::kBFloat16 ? r(r(f * f) * f) : r(f * f * f);
  }
};

// 0.5 * x * (1.0 + tanh(inner)) with inner computed from x by `inner_of` (in float32, rounded).
template <class Inner>
at::Tensor tanh_gelu(const at::Tensor& x, Inner&& inner_of) {
  const HalfOps o{x.scalar_type(),
                  x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16};
  const at::Tensor f = o.reduced ? x.to(at::kFloat) : x;
  const at::Tensor t = o.r(o.r(at::tanh(inner_of(o, f))) + 1.0);
  const at::Tensor y = o.r(f * 0.5) * t;
  return o.reduced ? y.to(o.dt) : y;
}

}  // namespace

at::Tensor activate(const at::Tensor& x, Activation a) {
  switch (a) {
    case Activation::kSilu:
      return via_float(x, [](const at::Tensor& t) { return at::silu(t); });
    case Activation::kGeluTanh:
      return via_float(x, [](const at::Tensor& t) { return at::gelu(t, "tanh"); });
    case Activation::kGeluExact:
      return via_float(x, [](const at::Tensor& t) { return at::gelu(t); });
    case Activation::kRelu:  // exact; through float32 since 1.13 has no float16 relu on the CPU
      return via_float(x, [](const at::Tensor& t) { return at::relu(t); });
    case Activation::kGeluNew:
      // NewGELUActivation: 0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))
      return tanh_gelu(x, [](const HalfOps& o, const at::Tensor& f) {
        return o.r(o.r(f + o.r(o.cube(f) * 0.044715)) * kSqrt2OverPi);
      });
    case Activation::kGeluFast:
      // FastGELUActivation: 0.5 * x * (1.0 + tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x)))
      return tanh_gelu(x, [](const HalfOps& o, const at::Tensor& f) {
        return o.r(o.r(f * 0.7978845608) * o.r(o.r(o.r(f * 0.044715) * f) + 1.0));
      });
    case Activation::kGeluBloom:
      // bloom_gelu_forward: x * 0.5 * (1.0 + tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
      return tanh_gelu(x, [](const HalfOps& o, const at::Tensor& f) {
        return o.r(o.r(f * 0.79788456) * o.r(o.r(o.r(f * 0.044715) * f) + 1.0));
      });
  }
  return x;
}

float activate(Activation a, float x) {
  switch (a) {
    case Activation::kSilu:
      return x / (1.0f + std::exp(-x));
    case Activation::kGeluTanh:
    case Activation::kGeluNew: {
      const auto c = static_cast<float>(kSqrt2OverPi);
      return (0.5f * x) * (1.0f + std::tanh(c * (x + 0.044715f * (x * x * x))));
    }
    case Activation::kGeluFast:
      return (0.5f * x) * (1.0f + std::tanh((x * 0.7978845608f) * (1.0f + (0.044715f * x) * x)));
    case Activation::kGeluBloom:
      return (0.5f * x) * (1.0f + std::tanh((x * 0.79788456f) * (1.0f + (0.044715f * x) * x)));
    case Activation::kGeluExact:
      return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
  }
  return x;
}

}  // namespace lmeval::hf

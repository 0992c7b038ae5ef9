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

// torch 2.15's vectorized erf (Vectorized<float>::erf, Abramowitz-Stegun 7.1.26 with fused
// multiply-adds), which its CPU gelu applies to float16/bfloat16 values: 1 - r(t) * t * exp(-x^2)
// with t = 1 / (1 + p|x|), the sign of x put back.
float torch_vec_erf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / std::fma(0.3275911f, a, 1.0f);
  float r = std::fma(1.061405429f, t, -1.453152027f);
  r = std::fma(r, t, 1.421413741f);
  r = std::fma(r, t, -0.284496736f);
  r = std::fma(r, t, 0.254829592f);
  const float e = -std::exp(-(x * x));
  return std::copysign(std::fma(e * t, r, 1.0f), x);
}

// GELUActivation (F.gelu) on a float16/bfloat16 CPU tensor as torch 2.15's kernel computes it:
// x * 0.5 * (1 + erf(x / sqrt 2)) in float32 with the vectorized erf, rounded once.
at::Tensor gelu_exact_half(const at::Tensor& x) {
  at::Tensor f = x.to(at::kFloat).contiguous();
  float* p = f.data_ptr<float>();
  const auto alpha = static_cast<float>(M_SQRT1_2);
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = p[i] * 0.5f * (1.0f + torch_vec_erf(p[i] * alpha));
  return f.to(x.scalar_type());
}

}  // namespace

at::Tensor activate(const at::Tensor& x, Activation a) {
  switch (a) {
    case Activation::kSilu:
      return via_float(x, [](const at::Tensor& t) { return at::silu(t); });
    case Activation::kGeluTanh:
      return via_float(x, [](const at::Tensor& t) { return at::gelu(t, "tanh"); });
    case Activation::kGeluExact:
      if (reduced_on_cpu(x)) return gelu_exact_half(x);
      return at::gelu(x);
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

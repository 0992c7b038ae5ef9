#include "models/hf/rope.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lmeval::hf {

namespace {

at::Tensor exponents(int64_t rd) {
  // arange(0, dim, 2, int64).float() / dim, as every transformers rope init function.
  return at::arange(0, rd, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) /
         static_cast<double>(rd);
}

at::Tensor factor_tensor(const std::vector<double>& f) {
  std::vector<float> v(f.begin(), f.end());  // torch.tensor(list, dtype=float32)
  return at::tensor(v, at::TensorOptions().dtype(at::kFloat));
}

at::Tensor llama3(const ArchConfig& cfg, at::Tensor inv) {
  const double old_len = static_cast<double>(cfg.rope_original_max_positions);
  const double low_wavelen = old_len / cfg.rope_low_freq_factor;
  const double high_wavelen = old_len / cfg.rope_high_freq_factor;
  at::Tensor wavelen = (2 * M_PI) / inv;
  at::Tensor scaled = at::where(wavelen.gt(low_wavelen), inv / cfg.rope_factor, inv);
  at::Tensor smooth = (old_len / wavelen - cfg.rope_low_freq_factor) /
                      (cfg.rope_high_freq_factor - cfg.rope_low_freq_factor);
  at::Tensor smoothed = (1 - smooth) * scaled / cfg.rope_factor + smooth * scaled;
  at::Tensor medium =
      wavelen.lt(high_wavelen).logical_not().logical_and(wavelen.gt(low_wavelen).logical_not());
  return at::where(medium, smoothed, scaled);
}

// _compute_yarn_parameters: interpolated frequencies for the slow dimensions, extrapolated ones
// for the fast, a linear ramp between.
at::Tensor yarn(const ArchConfig& cfg) {
  const int64_t dim = cfg.rotary_dim;
  const double base = cfg.rope_theta;
  const double orig = static_cast<double>(cfg.rope_original_max_positions);
  at::Tensor pos_freqs = at::pow(base, exponents(dim));
  at::Tensor extrapolation = pos_freqs.reciprocal();
  at::Tensor interpolation = (pos_freqs * cfg.rope_factor).reciprocal();
  auto correction_dim = [&](double rotations) {
    return (static_cast<double>(dim) * std::log(orig / (rotations * 2 * M_PI))) /
           (2 * std::log(base));
  };
  double low = correction_dim(cfg.rope_beta_fast), high = correction_dim(cfg.rope_beta_slow);
  if (cfg.rope_truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // as transformers: no division by zero
  at::Tensor ramp =
      ((at::arange(dim / 2, at::TensorOptions().dtype(at::kFloat)) - low) / (high - low))
          .clamp(0, 1);
  at::Tensor extrapolation_factor = 1 - ramp;
  return interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
}

// _compute_dynamic_ntk_parameters. At load (variant 0) transformers computes the base in Python
// floats; when a longer sequence arrives, from the length as an int64 tensor, so in float32.
at::Tensor dynamic_ntk(const ArchConfig& cfg, int64_t length) {
  const int64_t dim = cfg.rotary_dim;
  const int64_t max_pos = *cfg.max_position_embeddings;
  const double f = cfg.rope_factor;
  const double expo = static_cast<double>(dim) / static_cast<double>(dim - 2);
  if (length <= max_pos) {
    const double m = static_cast<double>(max_pos);
    const double base = cfg.rope_theta * std::pow(f * m / m - (f - 1), expo);
    return at::pow(base, exponents(dim)).reciprocal();
  }
  at::Tensor seq = at::scalar_tensor(length, at::TensorOptions().dtype(at::kLong));
  at::Tensor base = ((seq * f) / max_pos - (f - 1)).pow(expo) * cfg.rope_theta;
  return at::pow(base, exponents(dim)).reciprocal();
}

}  // namespace

bool rope_length_dependent(const ArchConfig& cfg) {
  return cfg.rope == RopeType::kDynamic || cfg.rope == RopeType::kLongRope;
}

int64_t rope_variant(const ArchConfig& cfg, int64_t length) {
  if (cfg.rope == RopeType::kLongRope) return length > cfg.rope_original_max_positions ? 1 : 0;
  if (cfg.rope == RopeType::kDynamic) return length > *cfg.max_position_embeddings ? length : 0;
  return 0;
}

at::Tensor rope_inv_freq(const ArchConfig& cfg, int64_t variant) {
  const int64_t rd = cfg.rotary_dim;
  if (variant == kLocalRopeVariant)
    return at::pow(cfg.rope_local_theta, exponents(rd)).reciprocal();
  switch (cfg.rope) {
    case RopeType::kYarn:
      return yarn(cfg);
    case RopeType::kDynamic:
      return dynamic_ntk(cfg, variant);
    case RopeType::kLongRope:
      return (factor_tensor(variant ? cfg.rope_long_factor : cfg.rope_short_factor) *
              at::pow(cfg.rope_theta, exponents(rd)))
          .reciprocal();
    default:
      break;
  }
  at::Tensor inv = at::pow(cfg.rope_theta, exponents(rd)).reciprocal();
  if (cfg.rope == RopeType::kLinear) inv = inv / cfg.rope_factor;
  if (cfg.rope == RopeType::kLlama3) inv = llama3(cfg, inv);
  return inv;
}

at::Tensor rope_rotate_half_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  if (!x.is_cpu() || x.scalar_type() != at::kFloat || x.dim() != 4 || cos.dim() != 4 ||
      sin.dim() != 4 || cos.scalar_type() != at::kFloat || sin.scalar_type() != at::kFloat ||
      x.size(-1) % 2 != 0 || cos.sizes() != sin.sizes() || cos.size(1) != 1 ||
      cos.size(2) != x.size(2) || cos.size(3) != x.size(3) ||
      (cos.size(0) != 1 && cos.size(0) != x.size(0)) || !cos.is_cpu() || !sin.is_cpu())
    return {};
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), d = x.size(3), half = d / 2;
  at::Tensor out = at::empty({B, H, T, d}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* cp = cos.data_ptr<float>();
  const float* sp = sin.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t xs3 = x.stride(3), cs3 = cos.stride(3), ss3 = sin.stride(3);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const float* xr = xp + b * x.stride(0) + h * x.stride(1) + t * x.stride(2);
        const int64_t cb = cos.size(0) == 1 ? 0 : b;
        const float* c = cp + cb * cos.stride(0) + t * cos.stride(2);
        const float* s = sp + cb * sin.stride(0) + t * sin.stride(2);
        float* o = op + ((b * H + h) * T + t) * d;
        for (int64_t i = 0; i < half; ++i) {  // rotate_half: [-x2, x1]
          const float x1 = xr[i * xs3], x2 = xr[(half + i) * xs3];
          o[i] = x1 * c[i * cs3] - x2 * s[i * ss3];
          o[half + i] = x2 * c[(half + i) * cs3] + x1 * s[(half + i) * ss3];
        }
      }
  return out;
}

void rotate_pairs_polar(float* v, const float* cos, const float* sin, int64_t pairs, int64_t e0,
                        int64_t n) {
  const int64_t vectorized = n / 8 * 8;
  const int64_t fused = vectorized + (n - vectorized) / 2 * 2;
  for (int64_t i = 0; i < pairs; ++i) {
    const float a = v[2 * i], b = v[2 * i + 1], c = cos[i], d = sin[i];
    const int64_t e = e0 + i;
    if (e >= vectorized && e < fused) {
      v[2 * i] = std::fma(a, c, -(b * d));
      v[2 * i + 1] = std::fma(a, d, b * c);
    } else {
      v[2 * i] = a * c - b * d;
      v[2 * i + 1] = a * d + b * c;
    }
  }
}

}  // namespace lmeval::hf

// scaled_dot_product_attention in float16/bfloat16 on the CPU, as torch 2.x's CPU flash attention
// (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp, cpu_flash_attention) rounds it: which
// transformers runs for every family that supports SDPA (HFLM passes no attn_implementation).
// The kernel keeps the scores, their running maximum and sum, and the output in float32; the
// only rounding to the model dtype inside is of the exponentiated scores before they multiply v
// (its qk_reduced buffer), per block of 512 keys against the running maximum so far; the output
// is the float32 sum times the reciprocal of the row's sum, rounded once.
//
// Its exponential is not std::exp: for a float16/bfloat16 output buffer torch 2.15's
// _exp_reduce_sum_fusion_kernel runs Vectorized<float>::fexp_u20, a degree-3 polynomial
// approximation of 2^x (relative error about 1e-4, so a bfloat16 probability often rounds the
// other way), over the row's whole vectors, and std::exp over the last (n mod vector width)
// keys; the row's sum adds the vector lanes first (vec_reduce_all's halving tree), then the
// tail. Both are reproduced here (measured bit for bit against torch 2.15's kernel:
// scripts/dump_half_hidden_states.py, docs/fidelity.md).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <vector>

#include <ATen/Parallel.h>

#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

constexpr int64_t kKeyBlock = 512;  // cpu_flash_attention's kv_split_size

// Vectorized<float>::size() of the kernels torch dispatches to on this CPU: 16 floats where it
// picks its AVX512 build (avx512f/bw/vl/dq), else 8 (AVX2, DEFAULT, and NEON's pair of
// registers). ATEN_CPU_CAPABILITY picks a build as torch's compute_cpu_capability does: "avx2"
// or "default" the 8-float ones, "avx512" the 16-float one where the CPU has it; read on every
// call, so that a process which sets it before scoring is followed.
int64_t vector_width() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
    const std::string_view e(env);
    if (e == "avx2" || e == "default") return 8;
  }
  return avx512 ? 16 : 8;
#else
  return 8;
#endif
}

// Vectorized<float>::fexp_u20 (vec512_float.h / vec256_float.h), one lane: 2^(x·log2 e) with
// the fraction's 2^f - f approximated by a cubic and the result assembled in the exponent bits.
float fexp_u20(float x) {
  const float log2e = std::bit_cast<float>(0x3fb8aa3bU);
  const float ln_flt_min = std::bit_cast<float>(0xc2aeac50U);
  const float ln_flt_max = std::bit_cast<float>(0x42b17218U);
  if (std::isnan(x)) return std::bit_cast<float>(0x80000000U);  // cvtt of NaN: INT_MIN
  if (x < ln_flt_min) return 0.0f;                              // -inf (masked keys) too
  if (x > ln_flt_max) return std::numeric_limits<float>::infinity();
  float src = x * log2e;
  const float frac = src - std::floor(src);
  float res = std::fma(frac, -0.079204240219773236f, -0.22433836478672356f);
  res = std::fma(frac, res, 0.30354260500649682f);
  res = std::fma(frac, res, 0.00010703434948458272f);
  src = src - res;
  const float t = std::fma(8388608.0f, src, 8388608.0f * 127.0f);
  return std::bit_cast<float>(static_cast<int32_t>(t));
}

// One block of keys: p = exp(s - m) per row as the kernel computes it, and the row's sum in its
// order. s and p are [rows, n] contiguous; m and sums [rows].
void exp_rows(const float* s, const float* m, int64_t rows, int64_t n, float* p, float* sums) {
  const int64_t w = vector_width(), nv = n - n % w;
  for (int64_t r = 0; r < rows; ++r) {
    const float* sr = s + r * n;
    float* pr = p + r * n;
    float lane[16] = {};
    for (int64_t j = 0; j < nv; ++j) {
      pr[j] = fexp_u20(sr[j] - m[r]);
      lane[j % w] += pr[j];
    }
    for (int64_t h = w / 2; h >= 1; h /= 2)
      for (int64_t l = 0; l < h; ++l) lane[l] += lane[l + h];
    float sum = lane[0];
    for (int64_t j = nv; j < n; ++j) {
      pr[j] = std::exp(sr[j] - m[r]);
      sum += pr[j];
    }
    sums[r] = sum;
  }
}

// a [..., R, K] times b [..., K, C] (the same leading dimensions), float32: each output summed
// over K from zero, one product after another, as torch's fallback CPU gemm (BlasKernel.cpp's
// gemm_transa_ for q·k, gemm_notrans_ for p·v) adds them for the flash kernel's half inputs;
// measured against torch 2.15 on random float16 heads (scripts/probe_half_sdpa_order.py), where
// four interleaved partial sums (its sum() helper) or 8-float lanes are not. With
// `interleaved4`, sum()'s four partial sums instead, for the q·k of a one-query call (a
// decoding step): torch's kernel sums a one-row block's scores in another order, not found
// yet, which this comes nearest (the script: 7 of 12,800 outputs apart, sequential 19); with
// it the decoding steps of the cohere2, exaone4 and olmo3 fixtures are transformers' bit for
// bit (sequential: apart from steps 2, 20 and 0). SDPA's math path (MLA below)
// gives the DeepSeek fixtures' bits with the sequential order too. Not at::matmul: OpenBLAS adds in
// an order of its own kernel's (its Haswell sgemm moves float16 attention outputs by an ulp where
// its SkylakeX one does not). A product of two float16/bfloat16 values is exact in float32, so a
// fused multiply-add rounds as the separate product and sum do.
Tensor ordered_matmul(const Tensor& a, const Tensor& b, bool interleaved4 = false) {
  const Tensor ac = a.to(at::kFloat).contiguous(), bc = b.to(at::kFloat).contiguous();
  const int64_t R = ac.size(-2), K = ac.size(-1), C = bc.size(-1);
  TORCH_CHECK(
      bc.size(-2) == K && ac.sizes().slice(0, ac.dim() - 2) == bc.sizes().slice(0, bc.dim() - 2),
      "ordered_matmul: shapes ", ac.sizes(), " and ", bc.sizes());
  std::vector<int64_t> shape = ac.sizes().vec();
  shape.back() = C;
  Tensor out = at::zeros(shape, ac.options());
  if (K == 0 || C == 0 || R == 0) return out;
  const float* ap = ac.data_ptr<float>();
  const float* bp = bc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t rows = ac.numel() / K, k4 = interleaved4 ? K - K % 4 : 0;
  at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / (K * C)), [&](int64_t begin, int64_t end) {
    std::vector<float> part(interleaved4 ? static_cast<size_t>(4 * C) : 0);
    for (int64_t r = begin; r < end; ++r) {
      const float* ar = ap + r * K;
      const float* bm = bp + (r / R) * K * C;
      float* orow = op + r * C;
      if (!interleaved4) {
        for (int64_t k = 0; k < K; ++k) {
          const float x = ar[k];
          const float* br = bm + k * C;
          for (int64_t c = 0; c < C; ++c) orow[c] += x * br[c];
        }
        continue;
      }
      // sum()'s four partial sums: product k into k % 4, the K mod 4 rest into the first,
      // then ((s0 + s1) + s2) + s3.
      std::fill(part.begin(), part.end(), 0.0f);
      for (int64_t k = 0; k < K; ++k) {
        const float x = ar[k];
        const float* br = bm + k * C;
        float* acc = part.data() + (k < k4 ? k % 4 : 0) * C;
        for (int64_t c = 0; c < C; ++c) acc[c] += x * br[c];
      }
      for (int64_t c = 0; c < C; ++c)
        orow[c] = ((part[c] + part[C + c]) + part[2 * C + c]) + part[3 * C + c];
    }
  });
  return out;
}

}  // namespace

Tensor Transformer::Impl::sdpa_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& mask, bool causal_only, const Tensor& bias) const {
  const auto dt = q.scalar_type();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Tensor allow = mask;
  if (causal_only || !allow.defined()) {
    const int64_t T = q.size(2), S = k.size(2);
    Tensor qi = at::arange(S - T, S, lopt()).unsqueeze(1), ki = at::arange(0, S, lopt());
    allow = ki.unsqueeze(0).le(qi);
  }
  if (v.size(-1) != q.size(-1)) {
    // Values narrower than queries (DeepSeek's MLA) rule out torch's CPU flash kernel, so
    // scaled_dot_product_attention takes its math path: q, k and v upcast to float32, the
    // scale's square root applied to q and k each, one softmax over the whole row.
    const double r = std::sqrt(cfg.attn_scale);
    Tensor sf = ordered_matmul(q.to(at::kFloat) * r, (k.to(at::kFloat) * r).transpose(-1, -2));
    if (bias.defined()) sf = sf + bias.to(dt).to(at::kFloat);
    sf = sf.masked_fill(allow.logical_not(), neg_inf);
    // A row with no key allowed gets zeros, as torch's _safe_softmax gives it.
    const Tensor p = at::softmax(sf, -1).nan_to_num(0.0);
    return ordered_matmul(p, v.to(at::kFloat)).to(dt);
  }
  // One query row is one q block of one row in torch's kernel (its blocks are 32-256 rows).
  Tensor s = ordered_matmul(q, k.transpose(-1, -2), q.size(2) == 1) * cfg.attn_scale;
  // A float mask (ALiBi as Falcon passes it) is in the model dtype and added after the scale.
  if (bias.defined()) s = s + bias.to(dt).to(at::kFloat);
  s = s.masked_fill(allow.logical_not(), neg_inf);
  const Tensor vf = v.to(at::kFloat);
  const int64_t S = s.size(-1);
  std::vector<int64_t> row_shape = s.sizes().vec();
  row_shape.back() = 1;
  const int64_t rows = s.numel() / std::max<int64_t>(S, 1);
  Tensor run_max = at::full(row_shape, neg_inf, s.options());
  Tensor sum = at::zeros(row_shape, s.options());
  Tensor out;
  std::vector<float> block_sum(static_cast<size_t>(rows));
  for (int64_t n0 = 0; n0 < S; n0 += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, S - n0);
    const Tensor block = s.narrow(-1, n0, n).contiguous();
    const Tensor m = at::maximum(std::get<0>(block.max(-1, true)), run_max).contiguous();
    // A row with no key allowed so far gets zeros and keeps its sum, maximum and output.
    const Tensor m_safe = m.masked_fill(m.eq(neg_inf), 0.0).contiguous();
    Tensor p = at::empty_like(block);
    exp_rows(block.data_ptr<float>(), m_safe.data_ptr<float>(), rows, n, p.data_ptr<float>(),
             block_sum.data());
    const Tensor bsum = at::from_blob(block_sum.data(), row_shape, at::kFloat);
    const Tensor pv = ordered_matmul(p.to(dt), vf.narrow(-2, n0, n));
    if (n0 == 0) {
      sum = bsum.clone();
      out = pv;
    } else {
      // exp(max so far - new max): std::exp, one per row.
      Tensor e = at::empty_like(m);
      const float* rm = run_max.contiguous().data_ptr<float>();
      const float* mm = m.data_ptr<float>();
      float* ep = e.data_ptr<float>();
      for (int64_t r = 0; r < rows; ++r) ep[r] = mm[r] == neg_inf ? 1.0f : std::exp(rm[r] - mm[r]);
      sum = bsum + e * sum;
      out = out * e + pv;
    }
    run_max = m;
  }
  sum = sum.masked_fill(sum.eq(0.0), 1.0);
  return (out * sum.reciprocal()).to(dt);
}

}  // namespace lmeval::hf

#include "models/hf/prefill_attention.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "models/hf/cpu_float32.hpp"
#include "models/hf/kernels.hpp"

namespace lmeval::hf {

namespace {

// Queries per block: a block's score rows (64 x keys) stay in L2.
constexpr int64_t kPromptQueryBlock = 64;

}  // namespace

at::Tensor prefill_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             int64_t past, int64_t window, int64_t chunk, double scale) {
  const auto f32_cpu = [](const at::Tensor& t) { return cpu_float32(t) && t.dim() == 4; };
  if (!f32_cpu(q) || !f32_cpu(k) || !f32_cpu(v) || q.size(0) != 1 || k.size(0) != 1 ||
      v.size(0) != 1 || q.size(2) < 2)
    return {};
  const int64_t H = q.size(1), T = q.size(2), qk = q.size(3);
  const int64_t KV = k.size(1), S = k.size(2), vd = v.size(3);
  if (KV == 0 || H % KV != 0 || v.size(1) != KV || v.size(2) != S || k.size(3) != qk ||
      S != past + T || k.stride(3) != 1 || v.stride(3) != 1)
    return {};
  const int64_t rep = H / KV;
  const at::Tensor qc = q.contiguous();
  at::Tensor out = at::empty({1, H, T, vd}, q.options());
  const float* qp = qc.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t ks = k.stride(2), vs = v.stride(2);
  const float fscale = static_cast<float>(scale);
  // The first key the query at position p sees.
  auto first_key = [&](int64_t p) {
    if (chunk > 0) return p / chunk * chunk;
    if (window > 0) return std::max<int64_t>(0, p - window + 1);
    return int64_t{0};
  };
  // One task per query head: its key/value head's keys transposed ([qk][S], the outer-product
  // form that runs at full vector width over a head's few dimensions), then its query blocks.
  // Heads split evenly over the threads, each with every block, so the causal triangle's work
  // is balanced.
  at::parallel_for(0, H, 1, [&](int64_t h0, int64_t h1) {
    std::vector<float> kt, scores;
    int64_t kt_head = -1;
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t g = h / rep;
      const float* keys = kp + g * k.stride(1);
      const float* values = vp + g * v.stride(1);
      if (g != kt_head) {
        kt.resize(static_cast<size_t>(qk * S));
        for (int64_t t = 0; t < S; ++t)
          for (int64_t d = 0; d < qk; ++d) kt[d * S + t] = keys[t * ks + d];
        kt_head = g;
      }
      for (int64_t b0 = 0; b0 < T; b0 += kPromptQueryBlock) {
        const int64_t qb = std::min(kPromptQueryBlock, T - b0);
        const int64_t lo = first_key(past + b0), hi = past + b0 + qb;  // keys [lo, hi)
        const int64_t n = hi - lo;
        scores.assign(static_cast<size_t>(qb * n), 0.0f);
        kernels::matmul_nn_acc(qp + (h * T + b0) * qk, qk, kt.data() + lo, S, scores.data(), n, qb,
                               n, qk);
        for (int64_t t = 0; t < qb; ++t) {
          const int64_t p = past + b0 + t;
          float* row = scores.data() + t * n;
          const int64_t a = first_key(p) - lo, len = p - lo + 1 - a;  // keys [a, a + len) of row
          float* r = row + a;
          for (int64_t j = 0; j < len; ++j) r[j] *= fscale;
          kernels::softmax(r, len);
          std::fill(row, r, 0.0f);
          std::fill(r + len, row + n, 0.0f);
        }
        float* o = op + (h * T + b0) * vd;
        std::fill(o, o + qb * vd, 0.0f);
        kernels::matmul_nn_acc(scores.data(), n, values + lo * vs, vs, o, vd, qb, vd, n);
      }
    }
  });
  return out;
}

}  // namespace lmeval::hf

// Benchmark of decode_attention (src/models/hf/decode_attention.hpp), the fused attention of a
// decoding step on the CPU, on random keys and values in the slot pool's layout; prints ms per
// step (all layers) and the keys' and values' bytes read per second, next to a plain read of
// the same tensors (the layout's floor). Built and run by scripts/bench_decode_attention (not a
// test). Arguments: rows heads kv_heads head_dim keys capacity layers threads iterations.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <immintrin.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "models/hf/decode_attention.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The sum of n floats from p (one pass of vector loads).
__attribute__((target("avx2"))) float sum_floats(const float* p, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i + 8 <= n; i += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(p + i));
  alignas(32) float l[8];
  _mm256_store_ps(l, acc);
  return l[0] + l[1] + l[2] + l[3] + l[4] + l[5] + l[6] + l[7];
}

// Reads every float of the tensors' first `keys` positions once, rows split over the threads
// as the attention splits them.
float read_all(const std::vector<at::Tensor>& ts, int64_t keys) {
  float total = 0;
  for (const auto& t : ts) {
    const int64_t B = t.size(0), KV = t.size(1), hd = t.size(3);
    const float* p = t.data_ptr<float>();
    std::vector<float> part(static_cast<size_t>(B));
    at::parallel_for(0, B, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        for (int64_t g = 0; g < KV; ++g)
          part[static_cast<size_t>(b)] +=
              sum_floats(p + b * t.stride(0) + g * t.stride(1), keys * hd);
    });
    for (float x : part) total += x;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 10 || !__builtin_cpu_supports("avx2")) {
    std::fprintf(stderr,
                 "usage: bench_decode_attention rows heads kv_heads head_dim keys capacity layers "
                 "threads iterations (an AVX2 CPU)\n");
    return 2;
  }
  const auto arg = [&](int i) { return std::atoll(argv[i]); };
  const int64_t B = arg(1), H = arg(2), KV = arg(3), hd = arg(4), S = arg(5), cap = arg(6),
                L = arg(7), iters = arg(9);
  at::set_num_threads(static_cast<int>(arg(8)));
  at::manual_seed(0);
  std::vector<at::Tensor> ks, vs;
  for (int64_t l = 0; l < L; ++l) {
    ks.push_back(at::randn({B, KV, cap, hd}));
    vs.push_back(at::randn({B, KV, cap, hd}));
  }
  const at::Tensor q = at::randn({B, H, 1, hd});
  const std::vector<int64_t> first(static_cast<size_t>(B), 0), last(static_cast<size_t>(B), S - 1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  auto step = [&] {
    for (int64_t l = 0; l < L; ++l)
      if (!lmeval::hf::decode_attention(q, ks[l].narrow(2, 0, S), vs[l].narrow(2, 0, S), first,
                                        last, scale)
               .defined())
        std::exit((std::fprintf(stderr, "decode_attention does not apply to this shape\n"), 2));
  };
  for (int i = 0; i < 3; ++i) step();
  auto t0 = clock_type::now();
  for (int64_t i = 0; i < iters; ++i) step();
  const double att = seconds_since(t0) / static_cast<double>(iters);
  float sink = 0;
  t0 = clock_type::now();
  for (int64_t i = 0; i < iters; ++i) sink += read_all(ks, S) + read_all(vs, S);
  const double read = seconds_since(t0) / static_cast<double>(iters);
  const double bytes = 2.0 * static_cast<double>(L * B * KV * S * hd) * sizeof(float);
  std::printf(
      "%lld rows, %lld heads (%lld kv) of %lld, %lld keys (capacity %lld), %lld layers, %d "
      "threads: attention %.3f ms/step (%.1f GB/s), plain read %.3f ms (%.1f GB/s)%s\n",
      static_cast<long long>(B), static_cast<long long>(H), static_cast<long long>(KV),
      static_cast<long long>(hd), static_cast<long long>(S), static_cast<long long>(cap),
      static_cast<long long>(L), at::get_num_threads(), att * 1e3, bytes / att / 1e9, read * 1e3,
      bytes / read / 1e9, sink == 12345.0f ? " " : "");
  return 0;
}

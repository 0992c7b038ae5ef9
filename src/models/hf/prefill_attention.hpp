// A prompt's attention on the CPU in float32, fused and causal: each block of 64 queries of a
// head meets only the keys up to its last query (and from its window or chunk on), the scores
// and the values' weighted sum through kernels::matmul_nn_acc, the softmax with
// kernels::exp_shifted. The general path builds the whole [heads, T, S] score tensor and runs
// five ATen passes over it (scale, mask, softmax, two products): on a 102M Llama's 1,040-token
// gsm8k prompts that was half of the prefill (docs/performance.md, "Prefill attention"). The sums
// run in another order than OpenBLAS's (float32 noise). Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace lmeval::hf {

// q [1, H, T, qk]: queries at positions past .. past + T - 1; k [1, KV, S, qk] and v [1, KV, S,
// vd] with S = past + T and unit stride in their last dimension (views of the cache). Query
// head h uses key/value head h / (H / KV); the query at position p sees keys lo .. p, where lo
// is p's chunk start (chunk > 0), else p - window + 1 (window > 0), else 0. Scores are scaled by
// `scale` after the dot product, as the eager attention does. Returns [1, H, T, vd], or an
// undefined tensor where the fused form does not apply (not float32 on the CPU, a batch of
// several rows, a single query): the caller then runs its general path.
at::Tensor prefill_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             int64_t past, int64_t window, int64_t chunk, double scale);

}  // namespace lmeval::hf

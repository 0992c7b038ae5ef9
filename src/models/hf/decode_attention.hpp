// A decoding step's attention on the CPU in float32, fused: each row's query heads meet only
// their own keys (positions first[b]..last[b] of the slot pool), scores, softmax and the values'
// weighted sum in one pass per row and key/value head. The general path multiplies every row's
// [rep x S] scores through OpenBLAS, which packs each (row, key/value head) pair's keys and
// values before multiplying them: two thirds of its time for head dimension 8
// (docs/performance.md, "Fused decode attention"). The sums run in another order than
// OpenBLAS's (float32 noise). Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace lmeval::hf {

// q [B, H, 1, qk]; k [B, KV, S, qk] and v [B, KV, S, vd] with unit stride in their last
// dimension (views of the slot pool); query head h uses key/value head h / (H / KV), row b its
// keys first[b]..last[b] (inclusive), scores scaled by `scale` after the dot product, as the
// eager attention does. Returns [B, H, 1, vd], or an undefined tensor where the fused form does
// not apply (a CPU without AVX2 and FMA, head sizes not multiples of 8, not float32): the
// caller then runs its general path.
at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const std::vector<int64_t>& first, const std::vector<int64_t>& last,
                            double scale);

}  // namespace lmeval::hf

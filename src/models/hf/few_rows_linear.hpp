// nn.Linear in float32 on the CPU for a product of a few rows (a decoding step's projections and
// LM head): kernels::matmul_nt instead of OpenBLAS. OpenBLAS packs the whole weight matrix
// for every call whatever the row count, and its workers spin in sched_yield between the step's
// calls: on a 102M Llama's 8-row decoding step that was 60% of the step (docs/performance.md,
// "Decoding step's projections"). matmul_nt streams each weight row once for all rows, and each
// output is the same dot product whatever the batch (kernels.hpp), so a row's tokens no longer
// depend on how many rows share its step. Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace lmeval::hf {

// Products of at most this many rows take the few-rows path. Measured on the 2-core EPYC (a 102M
// Llama's projections and head, weights from memory): 1-8 rows 2.0-2.8x faster than OpenBLAS,
// 16 rows 1.7x, 32 rows 1.5x, 64 rows 1.1x, 128 rows 0.95x.
constexpr int64_t kFewRows = 64;

// x [..., in] float32 on the CPU, w [out, in] float32 contiguous, b [out] or undefined: x w^T + b
// when x holds at most kFewRows rows; else an undefined tensor (the caller runs at::linear).
at::Tensor few_rows_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

}  // namespace lmeval::hf

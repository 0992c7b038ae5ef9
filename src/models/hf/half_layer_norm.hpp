// torch 2.15's CPU LayerNorm of a float16/bfloat16 tensor, bit for bit: the row's mean and
// variance by RowwiseMoments (Welford over chunks of 16 half vectors, each converted to two
// 8-float vectors, the lanes merged at the end: moments_utils.h, AVX2 widths), then
// (x * rstd + (-rstd * mean)) * w + b in float32 with fused multiply-adds and one rounding
// (layer_norm_kernel_mixed_type). libtorch 1.13's float32 kernel takes the moments over 8-float
// vectors in another order, which moves a normed value by an ulp now and then. Internal to
// src/models/hf.
#pragma once

#include <ATen/ATen.h>

namespace lmeval::hf {

// x [..., N] float16/bfloat16 on the CPU; w and b [N] (either undefined: 1 and 0).
at::Tensor layer_norm_half(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                           double eps);

// CohereLayerNorm's formula, which is not F.layer_norm: x in float32, mean = sum(x) / N,
// var = sum((x - mean)^2) / N, each sum in the order of torch 2.15's contiguous inner sum
// (SumKernel.cpp: 8-float vectors in four accumulators with its cascade, the leftover vectors,
// the accumulators added, the leftover elements, then the lanes; AVX2 width), and
// (x - mean) * (1 / sqrt(var + eps)). x [..., N] of any floating dtype, taken in float32; returns
// float32, unweighted.
at::Tensor normalized_by_formula(const at::Tensor& x, double eps);

// torch.sum of n contiguous floats as that kernel adds them (its own test: HalfLayerNorm's
// InnerSumIsTorchs).
float torch_inner_sum(const float* x, int64_t n);

}  // namespace lmeval::hf

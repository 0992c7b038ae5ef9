// The feed-forward activations as transformers computes them (activations.py's ACT2FN, and
// modeling_bloom.py's bloom_gelu_forward). The fused ones (silu, gelu, gelu_pytorch_tanh, relu)
// are one ATen kernel that works in float32 and rounds once; gelu_new, gelu_fast and Bloom's
// gelu are Python formulas, so in float16/bfloat16 each of their operations rounds to the
// dtype, and they are run here op for op in the same order to get the same bits.
#pragma once

#include <ATen/ATen.h>

#include "models/hf/arch/arch_config.hpp"

namespace lmeval::hf {

at::Tensor activate(const at::Tensor& x, Activation a);

// The same function in float32 arithmetic on one value (prefix_forward.cpp's rows), the Python
// formulas' operations in their order.
float activate(Activation a, float x);

}  // namespace lmeval::hf

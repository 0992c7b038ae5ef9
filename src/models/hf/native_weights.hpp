// What the two native loaders (the decoder-only Transformer and the EncoderDecoder) share when
// they set up and take a checkpoint's tensors: the device, the dtype names, and the checked
// lookup of a tensor.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

// The device a model loads on: "" is the CPU; like HFLM, a CUDA device where CUDA is not
// available falls back to the CPU (with a warning saying why the run is slow); a CUDA index past
// the GPUs present, or anything but cpu / cuda / cuda:N, is a UserError.
at::Device native_device(const std::string& requested);

// A safetensors dtype ("F32", "BF16", "I64", ...) as ATen's; float32 when unknown.
at::ScalarType safetensors_scalar_type(const std::string& dtype);

// The name transformers gives a floating dtype in the results' config ("torch.float16").
std::string torch_dtype_name(at::ScalarType t);

// The tensor stored under the first of `names` the archive holds, its shape checked against the
// one config.json implies and its dtype floating (F32, F16, BF16 or F64): UserErrors naming the
// tensor otherwise. Null when none is there and it is not `required`. `architecture` names what
// a missing tensor's checkpoint should have been.
const TensorView* find_weight(const WeightArchive& w, const std::vector<std::string>& names,
                              const std::vector<int64_t>& shape, bool required,
                              const std::string& architecture);

// The view's bytes as a tensor of its own dtype, without a copy (valid until it is released).
at::Tensor tensor_over(const TensorView& view);

}  // namespace lmeval::hf

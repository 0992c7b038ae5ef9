// The condition the hf backend's own float32 CPU kernels (decode_attention, prefill_attention,
// few_rows_linear) put on every tensor they take; on any other tensor they decline and the
// general ATen path runs.
#pragma once

#include <ATen/ATen.h>

namespace lmeval::hf {

inline bool cpu_float32(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat;
}

}  // namespace lmeval::hf

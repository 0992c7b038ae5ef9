// The ggml tensor types a GGUF file can hold, and their dequantisation to float32, written from
// the block layouts of ggml's ggml-common.h (the same numbers as gguf-py's gguf.quants.dequantize,
// which transformers' GGUF loader calls). No torch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lmeval::hf {

struct GgmlType {
  uint32_t id = 0;
  const char* name = "";
  int64_t block = 1;           // elements per block
  size_t block_bytes = 0;      // bytes per block
  bool dequantizable = false;  // lm-eval turns it into float32
};

// The type of that id, or null for an id ggml does not define.
const GgmlType* ggml_type(uint32_t id);

// The names of the types lm-eval dequantises, for messages ("F32, F16, ...").
std::string dequantizable_type_names();

// The IEEE half-precision number at `p` (little-endian) as float32.
float half_to_float(const std::byte* p);

// `n` elements (a whole number of blocks) of type `t` from `src` into `dst`. `t` must be
// dequantizable.
void dequantize(const GgmlType& t, const std::byte* src, float* dst, int64_t n);

}  // namespace lmeval::hf

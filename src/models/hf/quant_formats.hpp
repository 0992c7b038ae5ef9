// The arithmetic of pre-quantised weights: unpacking the integers of each format and scaling them
// as the package that wrote them does on the CPU (quant_weights.hpp finds the tensors). No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/hf/checkpoint.hpp"

namespace lmeval::hf::quant {

// The integers of a view (I8, U8, I16, I32, I64, BOOL) widened; RuntimeError for other dtypes.
std::vector<int64_t> ints_of(const TensorView& t);
// The 32-bit words of an I32/U32 view (packed integers), as unsigned.
std::vector<uint32_t> words_of(const TensorView& t);
// A float8 byte (F8_E4M3: e4m3fn, F8_E5M2) as float32, as torch's conversion.
float fp8_to_float(uint8_t byte, bool e5m2);
// The elements of an F8_E4M3 / F8_E5M2 view as float32.
std::vector<float> fp8_values(const TensorView& t);

// Element `index` of a dense little-endian bit stream of `bits`-bit fields over 32-bit words
// (GPTQ's and compressed-tensors' packing: fields may straddle two words, as 3-bit ones do).
inline uint32_t bit_field(const uint32_t* words, int64_t index, int bits) {
  const int64_t bit = index * bits;
  const uint64_t lo = words[bit / 32];
  const uint64_t both = (bit % 32) + bits > 32 ? lo | (uint64_t{words[bit / 32 + 1]} << 32) : lo;
  return static_cast<uint32_t>((both >> (bit % 32)) & ((uint64_t{1} << bits) - 1));
}

// Rounds v to the dtype ("F16", "BF16"; "F32" keeps it), as torch's arithmetic in that dtype
// rounds each result.
float round_to_dtype(float v, const std::string& dtype);

// A 2-D grid of scales (and zero points) over a [rows, cols] weight: element (r, c) takes cell
// (r / block_rows, group(c)), where group(c) is c / block_cols or, with g_idx, g_idx[c].
struct ScaleGrid {
  std::vector<float> scales;  // [grid_rows, grid_cols]
  std::vector<float> zeros;   // same shape, or empty for none
  int64_t grid_rows = 1, grid_cols = 1;
  int64_t block_rows = 1, block_cols = 1;
  std::vector<int64_t> g_idx;  // per column, or empty
  // The dtype the package computes in (its scales'): each operation is rounded to it.
  std::string dtype = "F32";
};

// weight[r, c] = (q[r, c] - zero) · scale in the grid's dtype, for the q values given row-major
// [rows, cols]: compressed-tensors' _dequantize, GPTQ's and AWQ's dequantisation.
std::vector<float> dequantise(const std::vector<float>& q, int64_t rows, int64_t cols,
                              const ScaleGrid& grid);

}  // namespace lmeval::hf::quant

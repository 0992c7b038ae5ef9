// Unpacking and scaling of pre-quantised weights (quant_formats.hpp).
#include "models/hf/quant_formats.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "lmeval/core/error.hpp"
#include "models/hf/weight_edits.hpp"

namespace lmeval::hf::quant {

namespace {

template <typename T>
void widen(const TensorView& t, std::vector<int64_t>& out) {
  const size_t n = t.nbytes / sizeof(T);
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, t.data + i * sizeof(T), sizeof(T));
    out[i] = static_cast<int64_t>(v);
  }
}

}  // namespace

std::vector<int64_t> ints_of(const TensorView& t) {
  std::vector<int64_t> out;
  if (t.dtype == "I8") {
    widen<int8_t>(t, out);
  } else if (t.dtype == "U8" || t.dtype == "BOOL") {
    widen<uint8_t>(t, out);
  } else if (t.dtype == "I16") {
    widen<int16_t>(t, out);
  } else if (t.dtype == "I32") {
    widen<int32_t>(t, out);
  } else if (t.dtype == "U32") {
    widen<uint32_t>(t, out);
  } else if (t.dtype == "I64") {
    widen<int64_t>(t, out);
  } else {
    throw RuntimeError("tensor '" + t.name + "' of dtype " + t.dtype + " is not integer");
  }
  return out;
}

std::vector<uint32_t> words_of(const TensorView& t) {
  if (t.dtype != "I32" && t.dtype != "U32")
    throw RuntimeError("tensor '" + t.name + "' of dtype " + t.dtype + " is not 32-bit words");
  std::vector<uint32_t> out(t.nbytes / 4);
  if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * 4);
  return out;
}

float fp8_to_float(uint8_t byte, bool e5m2) {
  const bool negative = (byte & 0x80) != 0;
  const int mant_bits = e5m2 ? 2 : 3;
  const int bias = e5m2 ? 15 : 7;
  const int exp = (byte & 0x7F) >> mant_bits;
  const int mant = byte & ((1 << mant_bits) - 1);
  float v;
  if (e5m2 && exp == 31) {
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else if (!e5m2 && exp == 15 && mant == 7) {
    v = std::numeric_limits<float>::quiet_NaN();  // e4m3fn has no infinities
  } else if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), 1 - bias - mant_bits);
  } else {
    v = std::ldexp(static_cast<float>(mant + (1 << mant_bits)), exp - bias - mant_bits);
  }
  return negative ? -v : v;
}

std::vector<float> fp8_values(const TensorView& t) {
  if (t.dtype != "F8_E4M3" && t.dtype != "F8_E5M2")
    throw RuntimeError("tensor '" + t.name + "' of dtype " + t.dtype + " is not float8");
  const bool e5m2 = t.dtype == "F8_E5M2";
  float table[256];
  for (int b = 0; b < 256; ++b) table[b] = fp8_to_float(static_cast<uint8_t>(b), e5m2);
  std::vector<float> out(t.nbytes);
  for (size_t i = 0; i < t.nbytes; ++i) out[i] = table[static_cast<uint8_t>(t.data[i])];
  return out;
}

float round_to_dtype(float v, const std::string& dtype) {
  if (dtype == "F16") return round_to_half(v);
  if (dtype == "BF16") return round_to_bfloat16(v);
  return v;
}

std::vector<float> dequantise(const std::vector<float>& q, int64_t rows, int64_t cols,
                              const ScaleGrid& grid) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  std::vector<int64_t> group(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c)
    group[c] = grid.g_idx.empty() ? c / grid.block_cols : grid.g_idx[c];
  const std::string& d = grid.dtype;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t cell_row = (r / grid.block_rows) * grid.grid_cols;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t cell = cell_row + group[c];
      float v = round_to_dtype(q[r * cols + c], d);
      if (!grid.zeros.empty()) v = round_to_dtype(v - round_to_dtype(grid.zeros[cell], d), d);
      out[r * cols + c] = round_to_dtype(v * grid.scales[cell], d);
    }
  }
  return out;
}

}  // namespace lmeval::hf::quant

// bitsandbytes' CPU dequantisation (bnb_formats.hpp).
#include "models/hf/bnb_formats.hpp"

#include "models/hf/quant_formats.hpp"

namespace lmeval::hf::quant {

namespace {

// csrc/cpu_ops.cpp's tables, which its dequantize_4bit kernel uses in place of the checkpoint's
// weight.quant_map (equal to it for checkpoints bitsandbytes wrote).
constexpr float kNf4[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};
constexpr float kFp4[16] = {
    0.0f,  0.005208333333f,  0.66666667f,  1.0f,  0.33333333f,  0.5f,  0.16666667f,  0.25f,
    -0.0f, -0.005208333333f, -0.66666667f, -1.0f, -0.33333333f, -0.5f, -0.16666667f, -0.25f,
};

}  // namespace

const float* bnb4_code_table(const std::string& quant_type) {
  if (quant_type == "nf4") return kNf4;
  if (quant_type == "fp4") return kFp4;
  return nullptr;
}

std::vector<float> bnb_nested_absmax(const std::vector<int64_t>& codes,
                                     const std::vector<float>& nested_table,
                                     const std::vector<float>& nested_absmax,
                                     int64_t nested_blocksize, float offset) {
  std::vector<float> out(codes.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    // Two statements: the product is rounded before the offset is added, as the kernel's
    // float32 output and torch's separate addition round it.
    const float scaled = nested_table[codes[i]] * nested_absmax[i / nested_blocksize];
    out[i] = scaled + offset;
  }
  return out;
}

std::vector<float> bnb4_dequantise(const uint8_t* bytes, int64_t n, const float* code,
                                   const std::vector<float>& absmax, int64_t blocksize,
                                   const std::string& dtype) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t b = bytes[i / 2];
    const int nibble = i % 2 == 0 ? b >> 4 : b & 0xF;
    out[i] = round_to_dtype(code[nibble] * absmax[i / blocksize], dtype);
  }
  return out;
}

std::vector<float> bnb_int8_dequantise(const int8_t* q, int64_t rows, int64_t cols,
                                       const std::vector<float>& scb) {
  // bitsandbytes/_ops.py: A * stats.view(-1, 1) * 7.874015718698502e-3; torch multiplies a
  // float32 tensor by a Python float in float32.
  const float reciprocal = static_cast<float>(7.874015718698502e-3);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float scaled = static_cast<float>(q[r * cols + c]) * scb[r];
      out[r * cols + c] = scaled * reciprocal;
    }
  return out;
}

}  // namespace lmeval::hf::quant

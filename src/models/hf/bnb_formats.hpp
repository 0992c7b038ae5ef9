// bitsandbytes' CPU arithmetic for its serialised weights (quant_weights.cpp finds the tensors):
// the 4-bit codes (nf4, fp4) times their blocks' absmax, the double-quantised absmax itself, and
// LLM.int8()'s row-scaled int8 weights. No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmeval::hf::quant {

// The 16 values the CPU kernel (csrc/cpu_ops.cpp, nf4_lut / fp4_lut) gives each 4-bit code of
// quant_type "nf4" or "fp4"; nullptr for another quant_type.
const float* bnb4_code_table(const std::string& quant_type);

// A double-quantised absmax: torch.ops.bitsandbytes.dequantize_blockwise (float32,
// nested_table[code] · nested_absmax[block]) plus the offset, each step rounded to float32.
std::vector<float> bnb_nested_absmax(const std::vector<int64_t>& codes,
                                     const std::vector<float>& nested_table,
                                     const std::vector<float>& nested_absmax,
                                     int64_t nested_blocksize, float offset);

// dequantize_4bit on the CPU: element i (the high nibble of byte i/2 first) is
// code[nibble] · absmax[i / blocksize] in float32, then rounded to `dtype` ("F32", "BF16",
// "F16"), the compute dtype the weight is dequantised to.
std::vector<float> bnb4_dequantise(const uint8_t* bytes, int64_t n, const float* code,
                                   const std::vector<float>& absmax, int64_t blocksize,
                                   const std::string& dtype);

// int8_vectorwise_dequant: row r's int8 values times SCB[r] times 1/127 (7.874015718698502e-3
// as a float32 scalar), two float32 roundings, [rows, cols] row-major.
std::vector<float> bnb_int8_dequantise(const int8_t* q, int64_t rows, int64_t cols,
                                       const std::vector<float>& scb);

}  // namespace lmeval::hf::quant

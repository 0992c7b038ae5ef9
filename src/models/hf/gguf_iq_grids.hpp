// ggml's grid IQ types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): each block of 256
// elements indexes fixed codebooks (gguf_iq_grids.inc, generated from gguf-py). Dequantised as
// gguf.quants computes them in numpy float32, the same products in the same order.
#pragma once

#include <cstddef>

namespace lmeval::hf::iq {

void iq2_xxs(const std::byte* b, float* y);  // {f16 d; u16 qs[32]}
void iq2_xs(const std::byte* b, float* y);   // {f16 d; u16 qs[32]; u8 scales[8]}
void iq2_s(const std::byte* b,
           float* y);  // {f16 d; u8 qs[32]; u8 signs[32]; u8 qh[8]; u8 scales[8]}
void iq3_xxs(const std::byte* b, float* y);  // {f16 d; u8 qs[64]; u8 scales_and_signs[32]}
void iq3_s(const std::byte* b,
           float* y);  // {f16 d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 scales[4]}
void iq1_s(const std::byte* b, float* y);  // {f16 d; u8 qs[32]; u16 qh[8]}
void iq1_m(const std::byte* b, float* y);  // {u8 qs[32]; u8 qh[16]; u8 scales[8]}

}  // namespace lmeval::hf::iq

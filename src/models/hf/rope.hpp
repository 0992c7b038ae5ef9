// Rotary embedding frequencies as transformers computes them (modeling_rope_utils.py), including
// the rope types whose frequencies depend on a sequence's length. Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

// True for dynamic NTK and LongRoPE, whose frequencies depend on the sequence's length.
// transformers takes that length from the longest position of the whole padded batch and, for
// dynamic NTK, from the longest call seen since the last short one (`dynamic_rope_update`), so a
// score would depend on its batch and on the run's history. lm-eval uses each sequence's own
// length: the numbers transformers gives for that sequence alone on a freshly loaded model.
bool rope_length_dependent(const ArchConfig& cfg);

// Names the frequency set used by a sequence whose positions are 0 .. length-1 (0 = the set the
// model starts with).
int64_t rope_variant(const ArchConfig& cfg, int64_t length);

// The variant of the sliding-window layers' own default frequencies (ArchConfig::rope_local_theta).
constexpr int64_t kLocalRopeVariant = -1;

// inv_freq [rotary_dim / 2], float32 on the CPU, of a variant.
at::Tensor rope_inv_freq(const ArchConfig& cfg, int64_t variant);

// One head's 2 * half rotary dims rotated in place by a position's cos and sin (each 2 * half
// long, the frequencies twice, as transformers lays them out): pairs (2i, 2i+1) by frequency i
// when `interleaved` (ArchConfig::rope_interleaved: GPT-J, DeepSeek's apply_rotary_emb), else
// rotate_half's pairs (i, i + half).
inline void rotate_head(float* v, const float* cos, const float* sin, int64_t half,
                        bool interleaved) {
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = v[2 * i], x2 = v[2 * i + 1];
      v[2 * i] = x1 * cos[i] - x2 * sin[i];
      v[2 * i + 1] = x2 * cos[i] + x1 * sin[i];
    }
    return;
  }
  for (int64_t i = 0; i < half; ++i) {
    const float x1 = v[i], x2 = v[half + i];
    v[i] = x1 * cos[i] - x2 * sin[i];
    v[half + i] = x2 * cos[half + i] + x1 * sin[half + i];
  }
}

// x * cos + rotate_half(x) * sin, transformers' apply_rotary_pos_emb over all of x's last
// dimension, for float32 CPU tensors x [B, H, T, d] and cos, sin [B or 1, 1, T, d] (any
// strides): each product rounded, then their sum, as the eager form's three operations do, in
// one pass instead of seven operator calls (a decoding step of a small model spends more on the
// calls than on the arithmetic). Returns a contiguous [B, H, T, d], or an undefined tensor for
// other types, devices and shapes.
at::Tensor rope_rotate_half_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
// One head's `pairs` complex numbers (v[2i], v[2i+1]) times (cos[i] + i sin[i]) in place, as
// torch's complex64 mul kernel computes them (apply_rotary_emb of DeepSeek-V2 and Llama 4,
// torch.polar's tables): the pair at index e0 + i of a contiguous run of n complex numbers (the
// TensorIterator's inner loop). vectorized_loop takes steps of 8 as two Vectorized<complex<float>>
// (ac - bd, ad + bc, each product rounded: _mm256_hsub_ps); its scalar remainder is compiled with
// contracted multiply-adds, fma(a, c, -bd) and fma(a, d, bc), two numbers at a time, and an odd
// last one without. Measured on torch 2.15 (AVX2; its AVX512 dispatch gives the same).
void rotate_pairs_polar(float* v, const float* cos, const float* sin, int64_t pairs, int64_t e0,
                        int64_t n);

}  // namespace lmeval::hf

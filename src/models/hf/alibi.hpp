// ALiBi, attention with linear biases: the per-head slopes as transformers computes them and the
// bias one key gets, in the form each family builds it (ArchConfig::alibi). The device path
// builds the same numbers with ATen (Transformer::Impl::alibi_tensor); torch-free.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "models/hf/arch/arch_config.hpp"
#include "models/hf/weight_edits.hpp"  // round_to_bfloat16

namespace lmeval::hf {

// BLOOM's _get_alibi_slopes and Falcon's build_alibi_tensor: the closest power of two at or below
// `heads` gets a geometric sequence, the remaining heads the odd powers of the next one's base.
std::vector<float> alibi_slopes_bloom(int64_t heads);

// MPT's build_mpt_alibi_tensor: 1 / 2^(i · bias_max / P) for the power of two P at or above
// `heads`, interleaved (odd entries first) and cut to `heads` when `heads` is not one.
std::vector<float> alibi_slopes_mpt(int64_t heads, double bias_max);

// The bias that a key at position `key_pos` adds to a query's scaled score in head `head`;
// `last_pos` is the position of the row's last key (kFromLastKey only).
inline float alibi_bias(const ArchConfig& c, int64_t head, int64_t key_pos, int64_t last_pos) {
  const float slope = c.alibi_slopes[static_cast<size_t>(head)];
  switch (c.alibi) {
    case Alibi::kKeyPosition:  // BLOOM build_alibi_tensor: slope · (cumsum(mask) - 1)
      return slope * static_cast<float>(key_pos);
    case Alibi::kKeyPositionBf16: {
      // Falcon build_alibi_tensor: slopes.bfloat16() * positions, the positions converted to
      // bfloat16 too and the product rounded to it; FalconModel then divides the bias by
      // √head_dim into the SDPA mask.
      const float b = round_to_bfloat16(round_to_bfloat16(slope) *
                                        round_to_bfloat16(static_cast<float>(key_pos)));
      return b / static_cast<float>(std::sqrt(static_cast<double>(c.head_dim)));
    }
    case Alibi::kFromLastKey:  // MPT: slope · (key index - (key length - 1))
      return slope * static_cast<float>(key_pos - last_pos);
    case Alibi::kNone:
      break;
  }
  return 0.0f;
}

}  // namespace lmeval::hf

// Little-endian reads of a ggml block's fields (ggml's layouts are little-endian; so is every
// machine lm-eval runs on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lmeval::hf {

inline uint16_t u16(const std::byte* p) {
  uint16_t v = 0;
  std::memcpy(&v, p, 2);
  return v;
}

inline uint32_t u32(const std::byte* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

inline const uint8_t* bytes(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }

}  // namespace lmeval::hf

// What the float16/bfloat16 bit-for-bit tests share with their golden scripts
// (scripts/gen_half_gemm_goldens.py's operand, bits and fnv1a64): operands made from the element
// index and a seed, exact in both dtypes, and a tensor's 16-bit patterns and their hash.
#pragma once

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace lmeval::hf::half_bits {

// Sets the environment a goldens file's "meta" names, before any forward runs: torch's CPU
// capability when it made them (lm-eval follows the capability torch would pick:
// reduced_attention.cpp) and its thread count (which places its attention buffers); goldens
// predating "threads" were made with torch's default on a 2-core machine.
inline void follow_goldens_environment(const nlohmann::json& meta) {
  std::string cap = meta.value("cpu_capability", "");
  for (char& c : cap) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!cap.empty()) setenv("ATEN_CPU_CAPABILITY", cap.c_str(), 1);
  setenv("LMEVAL_REFERENCE_THREADS", std::to_string(meta.value("threads", 2)).c_str(), 1);
}

// tests/fixtures/hf_arch/NAME, parsed once.
inline const nlohmann::json& golden(const std::string& name) {
  static std::map<std::string, nlohmann::json> files;
  auto it = files.find(name);
  if (it == files.end())
    it = files
             .emplace(name,
                      nlohmann::json::parse(lmeval::testing::read_file(
                          lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / name)))
             .first;
  return it->second;
}

// u = (i * 2654435761 + seed * 40503 + 12345) mod 2^32,
// value = (((u >> 24) & 255) - 128) * 2^(((u >> 8) & 15) mod 11 - 15).
inline at::Tensor operand(const std::vector<int64_t>& shape, uint64_t seed, at::ScalarType dt) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t u =
        (static_cast<uint64_t>(i) * 2654435761ULL + seed * 40503ULL + 12345ULL) % (1ULL << 32);
    const int64_t mant = static_cast<int64_t>((u >> 24) & 255) - 128;
    const int exp = static_cast<int>(((u >> 8) & 15) % 11) - 15;
    v[static_cast<size_t>(i)] = std::ldexp(static_cast<double>(mant), exp);
  }
  return at::tensor(v, at::kDouble).view(shape).to(dt);
}

inline std::vector<uint16_t> bits_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous().view(at::kShort).reshape({-1});
  const int16_t* p = c.data_ptr<int16_t>();
  std::vector<uint16_t> out(static_cast<size_t>(c.numel()));
  for (size_t j = 0; j < out.size(); ++j) out[j] = static_cast<uint16_t>(p[j]);
  return out;
}

// FNV-1a 64 of the patterns as little-endian bytes.
inline std::string fnv1a64(const std::vector<uint16_t>& bits) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint16_t b : bits)
    for (uint8_t byte : {static_cast<uint8_t>(b & 0xFF), static_cast<uint8_t>(b >> 8)})
      h = (h ^ byte) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace lmeval::hf::half_bits

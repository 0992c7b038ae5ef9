// The grid IQ types' dequantisation (gguf.quants' IQ*.dequantize_blocks): a scale per group,
// then codebook rows picked by indices, with signs from a sign table or sign bits (IQ1: a delta).
#include "models/hf/gguf_iq_grids.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/hf/gguf_bytes.hpp"
#include "models/hf/gguf_types.hpp"

namespace lmeval::hf::iq {

namespace {

#include "models/hf/gguf_iq_grids.inc"

int hex_digit(char c) { return c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0'; }

std::vector<uint8_t> unhex(const char* hex) {
  std::vector<uint8_t> out;
  for (size_t n = std::strlen(hex), i = 0; i + 1 < n; i += 2)
    out.push_back(static_cast<uint8_t>(hex_digit(hex[i]) << 4 | hex_digit(hex[i + 1])));
  return out;
}

// QuantBase.init_grid: each byte unpacked into 8 / bits indices, lowest bits first, each index
// replaced by its level; rows of `cols` values.
struct Grid {
  int cols = 0;
  std::vector<float> values;
  explicit Grid(const PackedGrid& g) : cols(g.cols) {
    const int per_byte = 8 / g.bits;
    const int step = 8 / per_byte;
    for (uint8_t byte : unhex(g.hex))
      for (int i = 0; i < per_byte; ++i)
        values.push_back(g.levels[static_cast<size_t>((byte >> (i * step)) & ((1 << g.bits) - 1))]);
    values.resize(static_cast<size_t>(g.rows) * static_cast<size_t>(g.cols));
  }
  const float* row(uint32_t i) const { return &values[static_cast<size_t>(i) * cols]; }
};

const std::vector<uint8_t>& ksigns() {
  static const std::vector<uint8_t> k = unhex(kKsignsHex);
  return k;
}

float sign(uint32_t bits, int j) { return (bits >> j) & 1 ? -1.0f : 1.0f; }

// `n` values of grid row `row`, times `db`, signs from the bits of `signs`.
void put(float* y, float db, const float* row, uint32_t signs, int n) {
  for (int j = 0; j < n; ++j) y[j] = db * row[j] * sign(signs, j);
}

// A 4-bit scale s as d * (0.5 + s) * 0.25, in float32 as numpy computes it.
float quarter_scale(float d, uint32_t s) { return d * (0.5f + static_cast<float>(s)) * 0.25f; }

}  // namespace

void iq2_xxs(const std::byte* b, float* y) {
  static const Grid grid(kIQ2XXSGrid);
  const float d = half_to_float(b);
  for (int g = 0; g < 8; ++g) {
    const uint32_t idx = u32(b + 2 + 8 * g), aux = u32(b + 6 + 8 * g);
    const float db = quarter_scale(d, aux >> 28);
    for (int l = 0; l < 4; ++l)
      put(y + 32 * g + 8 * l, db, grid.row((idx >> (8 * l)) & 0xff),
          ksigns()[(aux >> (7 * l)) & 0x7f], 8);
  }
}

void iq2_xs(const std::byte* b, float* y) {
  static const Grid grid(kIQ2XSGrid);
  const float d = half_to_float(b);
  const uint8_t* scales = bytes(b + 66);
  for (int k = 0; k < 32; ++k) {
    const uint16_t q = u16(b + 2 + 2 * k);
    const float db = quarter_scale(d, (scales[k / 4] >> (4 * ((k / 2) % 2))) & 0x0f);
    put(y + 8 * k, db, grid.row(q & 511), ksigns()[q >> 9], 8);
  }
}

void iq2_s(const std::byte* b, float* y) {
  static const Grid grid(kIQ2SGrid);
  const float d = half_to_float(b);
  const uint8_t* qs = bytes(b + 2);
  const uint8_t* signs = bytes(b + 34);
  const uint8_t* qh = bytes(b + 66);
  const uint8_t* scales = bytes(b + 74);
  for (int k = 0; k < 32; ++k) {
    const float db = quarter_scale(d, (scales[k / 4] >> (4 * ((k / 2) % 2))) & 0x0f);
    const uint32_t index = qs[k] | (((qh[k / 4] >> (2 * (k % 4))) & 3u) << 8);
    put(y + 8 * k, db, grid.row(index), signs[k], 8);
  }
}

void iq3_xxs(const std::byte* b, float* y) {
  static const Grid grid(kIQ3XXSGrid);
  const float d = half_to_float(b);
  const uint8_t* qs = bytes(b + 2);
  for (int g = 0; g < 8; ++g) {
    const uint32_t aux = u32(b + 66 + 4 * g);
    const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
    for (int l = 0; l < 4; ++l) {
      const uint32_t s = ksigns()[(aux >> (7 * l)) & 0x7f];
      float* out = y + 32 * g + 8 * l;
      put(out, db, grid.row(qs[8 * g + 2 * l]), s, 4);
      put(out + 4, db, grid.row(qs[8 * g + 2 * l + 1]), s >> 4, 4);
    }
  }
}

void iq3_s(const std::byte* b, float* y) {
  static const Grid grid(kIQ3SGrid);
  const float d = half_to_float(b);
  const uint8_t* qs = bytes(b + 2);
  const uint8_t* qh = bytes(b + 66);
  const uint8_t* signs = bytes(b + 74);
  const uint8_t* scales = bytes(b + 106);
  for (int g = 0; g < 8; ++g) {
    const uint32_t s = (scales[g / 2] >> (4 * (g % 2))) & 0x0f;
    const float db = d * static_cast<float>(1 + 2 * s);
    for (int l = 0; l < 8; ++l) {
      const int k = 8 * g + l;  // one index per 4 values
      const uint32_t index = qs[k] | (((qh[k / 8] >> (k % 8)) & 1u) << 8);
      put(y + 4 * k, db, grid.row(index), signs[k / 2] >> (4 * (k % 2)), 4);
    }
  }
}

// IQ1: dl * (grid value + delta), delta +-0.125 (IQ1_S.delta).
void iq1_rows(float* y, float dl, const float* row, float delta) {
  for (int j = 0; j < 8; ++j) y[j] = dl * (row[j] + delta);
}

void iq1_s(const std::byte* b, float* y) {
  static const Grid grid(kIQ1SGrid);
  const float d = half_to_float(b);
  const uint8_t* qs = bytes(b + 2);
  for (int g = 0; g < 8; ++g) {
    const uint16_t qh = u16(b + 34 + 2 * g);
    const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
    const float delta = qh & 0x8000 ? -0.125f : 0.125f;
    for (int l = 0; l < 4; ++l)
      iq1_rows(y + 32 * g + 8 * l, dl, grid.row(qs[4 * g + l] | (((qh >> (3 * l)) & 7u) << 8)),
               delta);
  }
}

void iq1_m(const std::byte* b, float* y) {
  static const Grid grid(kIQ1SGrid);
  const uint8_t* qs = bytes(b);
  const uint8_t* qh = bytes(b + 32);
  std::array<uint16_t, 4> sc{};
  for (int i = 0; i < 4; ++i) sc[static_cast<size_t>(i)] = u16(b + 48 + 2 * i);
  // The f16 super-block scale is the top nibbles of the four scale words.
  const uint16_t bits = static_cast<uint16_t>(((sc[0] & 0xf000) >> 12) | ((sc[1] & 0xf000) >> 8) |
                                              ((sc[2] & 0xf000) >> 4) | (sc[3] & 0xf000));
  std::byte raw[2];
  std::memcpy(raw, &bits, 2);
  const float d = half_to_float(raw);
  for (int k = 0; k < 32; ++k) {  // 8 values each; a 3-bit scale per pair of indices
    const int s = k / 2;
    const uint32_t scale = (sc[static_cast<size_t>(s / 4)] >> (3 * (s % 4))) & 7u;
    const float dl = d * static_cast<float>(2 * scale + 1);
    const uint32_t h = (qh[k / 2] >> (4 * (k % 2))) & 0x0f;
    iq1_rows(y + 8 * k, dl, grid.row(qs[k] | ((h & 7u) << 8)), h & 8 ? -0.125f : 0.125f);
  }
}

}  // namespace lmeval::hf::iq

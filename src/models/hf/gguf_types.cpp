// ggml's block layouts (ggml-common.h) and their float32 values (ggml-quants.c's
// dequantize_row_* as gguf-py's quants.py computes them: the same products, in the same order,
// so the float32 results are the same bits).
#include "models/hf/gguf_types.hpp"

#include <array>
#include <cmath>
#include <cstring>

#include "models/hf/gguf_bytes.hpp"
#include "models/hf/gguf_iq_grids.hpp"

namespace lmeval::hf {

namespace {

constexpr int64_t kQK = 256;  // elements of a K-quant super-block

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant != 0) {
    // A subnormal half is a normal float: shift the mantissa up to its leading one.
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  } else {
    bits = sign;
  }
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bits_to_f32(uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}

float half(const std::byte* p) { return f16_to_f32(u16(p)); }

// Q4_0 {f16 d; u8 qs[16]}, Q4_1 {f16 d, m; u8 qs[16]}: element j of the low nibbles, j + 16 of
// the high ones.
void q4(const std::byte* b, float* y, bool with_min) {
  const float d = half(b);
  const float m = with_min ? half(b + 2) : 0.0f;
  const uint8_t* qs = bytes(b + (with_min ? 4 : 2));
  for (int j = 0; j < 16; ++j) {
    if (with_min) {
      y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
      y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
    } else {
      y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
      y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

// Q5_0 {f16 d; u8 qh[4]; u8 qs[16]}, Q5_1 {f16 d, m; u8 qh[4]; u8 qs[16]}: the fifth bit of
// element j is bit j of qh, of element j + 16 bit j + 16.
void q5(const std::byte* b, float* y, bool with_min) {
  const float d = half(b);
  const float m = with_min ? half(b + 2) : 0.0f;
  const size_t off = with_min ? 4 : 2;
  const uint32_t qh = u32(b + off);
  const uint8_t* qs = bytes(b + off + 4);
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>((qh >> j) << 4 & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    const int x0 = (qs[j] & 0x0f) | h0;
    const int x1 = (qs[j] >> 4) | h1;
    if (with_min) {
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    } else {
      y[j] = static_cast<float>(x0 - 16) * d;
      y[j + 16] = static_cast<float>(x1 - 16) * d;
    }
  }
}

// Q8_0 {f16 d; i8 qs[32]}.
void q8_0(const std::byte* b, float* y) {
  const float d = half(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(bytes(b + 2)[j])) * d;
}

// Q2_K {u8 scales[16]; u8 qs[64]; f16 d, dmin}: 16 groups of 16, each with a 4-bit scale and a
// 4-bit min; 2-bit values.
void q2_k(const std::byte* b, float* y) {
  const uint8_t* sc = bytes(b);
  const uint8_t* q = bytes(b + 16);
  const float d = half(b + 80), dmin = half(b + 82);
  int is = 0;
  for (int n = 0; n < kQK; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half_ = 0; half_ < 2; ++half_) {
        const uint8_t s = sc[is++];
        const float dl = d * static_cast<float>(s & 0x0f);
        const float ml = dmin * static_cast<float>(s >> 4);
        for (int l = 0; l < 16; ++l)
          *y++ = dl * static_cast<float>((q[l + 16 * half_] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

// Q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: 16 6-bit signed scales (offset 32)
// packed in 12 bytes; 2-bit values, less 4 where the hmask bit is clear.
void q3_k(const std::byte* b, float* y) {
  const uint8_t* hm = bytes(b);
  const uint8_t* q = bytes(b + 32);
  const float d_all = half(b + 108);
  std::array<uint32_t, 4> aux{};
  std::memcpy(aux.data(), b + 96, 12);
  constexpr uint32_t kmask1 = 0x03030303u, kmask2 = 0x0f0f0f0fu;
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  std::array<int8_t, 16> scales{};
  std::memcpy(scales.data(), aux.data(), 16);
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < kQK; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half_ = 0; half_ < 2; ++half_) {
        const float dl = d_all * static_cast<float>(scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          const int i = l + 16 * half_;
          const int v = ((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(v);
        }
      }
      m = static_cast<uint8_t>(m << 1);
    }
    q += 32;
  }
}

// The 6-bit scale and min of group j of a Q4_K / Q5_K super-block (get_scale_min_k4).
void scale_min_k4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}, Q5_K {... ; u8 qh[32]; u8 qs[128]}: 8 groups
// of 32 with 6-bit scales and mins.
void q45_k(const std::byte* b, float* y, bool five) {
  const float d = half(b), dmin = half(b + 2);
  const uint8_t* scales = bytes(b + 4);
  const uint8_t* qh = bytes(b + 16);
  const uint8_t* ql = bytes(b + (five ? 48 : 16));
  int is = 0;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0; j < kQK; j += 64) {
    uint8_t sc = 0, m = 0;
    scale_min_k4(is, scales, sc, m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    scale_min_k4(is + 1, scales, sc, m);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      const int hi = five && (qh[l] & u1) ? 16 : 0;
      *y++ = d1 * static_cast<float>((ql[l] & 0x0f) + hi) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int hi = five && (qh[l] & u2) ? 16 : 0;
      *y++ = d2 * static_cast<float>((ql[l] >> 4) + hi) - m2;
    }
    ql += 32;
    is += 2;
    u1 = static_cast<uint8_t>(u1 << 2);
    u2 = static_cast<uint8_t>(u2 << 2);
  }
}

// Q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: 6-bit values (offset 32), 16 groups of 16.
void q6_k(const std::byte* b, float* y) {
  const uint8_t* ql = bytes(b);
  const uint8_t* qh = bytes(b + 128);
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half(b + 208);
  for (int n = 0; n < kQK; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4v = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4v);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// The 16 non-uniform levels of IQ4_NL and IQ4_XS (kvalues_iq4nl).
constexpr std::array<int8_t, 16> kIq4nl = {-127, -104, -83, -65, -49, -35, -22, -10,
                                           1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL {f16 d; u8 qs[16]}.
void iq4_nl(const std::byte* b, float* y) {
  const float d = half(b);
  const uint8_t* qs = bytes(b + 2);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIq4nl[qs[j] & 0x0f]);
    y[j + 16] = d * static_cast<float>(kIq4nl[qs[j] >> 4]);
  }
}

// IQ4_XS {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: 8 groups of 32 with 6-bit scales
// (offset 32).
void iq4_xs(const std::byte* b, float* y) {
  const float d = half(b);
  const uint16_t sh = u16(b + 2);
  const uint8_t* sl = bytes(b + 4);
  const uint8_t* qs = bytes(b + 8);
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 0x0f) | (((sh >> (2 * ib)) & 3) << 4);
    const float dl = d * static_cast<float>(ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * static_cast<float>(kIq4nl[qs[j] & 0x0f]);
      y[j + 16] = dl * static_cast<float>(kIq4nl[qs[j] >> 4]);
    }
    y += 32;
    qs += 16;
  }
}

// TQ1_0 {u8 qs[48]; u8 qh[4]; f16 d}: ternary digits packed five (then four) a byte as base-3
// fractions; digit n of byte q is ((q * 3^n mod 256) * 3) >> 8, less 1.
void tq1_0(const std::byte* b, float* y) {
  const uint8_t* qs = bytes(b);
  const uint8_t* qh = bytes(b + 48);
  const float d = half(b + 52);
  constexpr std::array<uint8_t, 6> pow3 = {1, 3, 9, 27, 81, 243};
  auto digit = [](uint8_t q) {
    return static_cast<float>(((static_cast<uint16_t>(q) * 3) >> 8) - 1);
  };
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 32; ++m) *y++ = digit(static_cast<uint8_t>(qs[m] * pow3[n])) * d;
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 16; ++m) *y++ = digit(static_cast<uint8_t>(qs[32 + m] * pow3[n])) * d;
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) *y++ = digit(static_cast<uint8_t>(qh[j] * pow3[n])) * d;
}

// TQ2_0 {u8 qs[64]; f16 d}: 2-bit values less 1.
void tq2_0(const std::byte* b, float* y) {
  const uint8_t* qs = bytes(b);
  const float d = half(b + 64);
  for (int j = 0; j < 64; j += 32)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m) *y++ = static_cast<float>(((qs[j + m] >> (l * 2)) & 3) - 1) * d;
}

// MXFP4 {u8 e; u8 qs[16]}: 4-bit floats (E2M1, doubled) times 2^(e - 128).
void mxfp4(const std::byte* b, float* y) {
  constexpr std::array<int8_t, 16> kv = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  const uint8_t e = bytes(b)[0];
  const float d = bits_to_f32(e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23);
  const uint8_t* qs = bytes(b + 1);
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(kv[qs[j] & 0x0f]) * d;
    y[j + 16] = static_cast<float>(kv[qs[j] >> 4]) * d;
  }
}

// NVFP4 {u8 d[4]; u8 qs[32]}: four groups of 16 4-bit floats, each group with an unsigned E4M3
// scale (halved, as the doubled E2M1 levels need; 0x7F reads as 0).
void nvfp4(const std::byte* b, float* y) {
  constexpr std::array<int8_t, 16> kv = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  const uint8_t* ds = bytes(b);
  const uint8_t* qs = bytes(b + 4);
  for (int s = 0; s < 4; ++s) {
    const uint8_t x = ds[s];
    const int exp = (x >> 3) & 0x0f;
    const int man = x & 7;
    double d = exp == 0 ? man * std::ldexp(1.0, -9) : (1.0 + man / 8.0) * std::ldexp(1.0, exp - 7);
    if (x == 0 || x == 0x7f) d = 0;
    d *= 0.5;
    for (int j = 0; j < 8; ++j) {
      y[16 * s + j] = static_cast<float>(d * kv[qs[8 * s + j] & 0x0f]);
      y[16 * s + j + 8] = static_cast<float>(d * kv[qs[8 * s + j] >> 4]);
    }
  }
}

enum : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
};

// ggml's types (ggml.h's enum ggml_type, gguf-py's GGML_QUANT_SIZES).
const std::array<GgmlType, 34> kTypes = {{
    {kF32, "F32", 1, 4, true},
    {kF16, "F16", 1, 2, true},
    {kQ4_0, "Q4_0", 32, 18, true},
    {kQ4_1, "Q4_1", 32, 20, true},
    {kQ5_0, "Q5_0", 32, 22, true},
    {kQ5_1, "Q5_1", 32, 24, true},
    {kQ8_0, "Q8_0", 32, 34, true},
    {kQ8_1, "Q8_1", 32, 40, false},
    {kQ2_K, "Q2_K", 256, 84, true},
    {kQ3_K, "Q3_K", 256, 110, true},
    {kQ4_K, "Q4_K", 256, 144, true},
    {kQ5_K, "Q5_K", 256, 176, true},
    {kQ6_K, "Q6_K", 256, 210, true},
    {kQ8_K, "Q8_K", 256, 292, false},
    {kIQ2_XXS, "IQ2_XXS", 256, 66, true},
    {kIQ2_XS, "IQ2_XS", 256, 74, true},
    {kIQ3_XXS, "IQ3_XXS", 256, 98, true},
    {kIQ1_S, "IQ1_S", 256, 50, true},
    {kIQ4_NL, "IQ4_NL", 32, 18, true},
    {kIQ3_S, "IQ3_S", 256, 110, true},
    {kIQ2_S, "IQ2_S", 256, 82, true},
    {kIQ4_XS, "IQ4_XS", 256, 136, true},
    {kI8, "I8", 1, 1, false},
    {kI16, "I16", 1, 2, false},
    {kI32, "I32", 1, 4, false},
    {kI64, "I64", 1, 8, false},
    {kF64, "F64", 1, 8, false},
    {kIQ1_M, "IQ1_M", 256, 56, true},
    {kBF16, "BF16", 1, 2, true},
    {kTQ1_0, "TQ1_0", 256, 54, true},
    {kTQ2_0, "TQ2_0", 256, 66, true},
    {kMXFP4, "MXFP4", 32, 17, true},
    {kNVFP4, "NVFP4", 64, 36, true},
    {kQ1_0, "Q1_0", 128, 18, false},
}};

}  // namespace

float half_to_float(const std::byte* p) { return half(p); }

const GgmlType* ggml_type(uint32_t id) {
  for (const auto& t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

std::string dequantizable_type_names() {
  std::string out;
  for (const auto& t : kTypes)
    if (t.dequantizable) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

void dequantize(const GgmlType& t, const std::byte* src, float* dst, int64_t n) {
  const int64_t blocks = n / t.block;
  switch (t.id) {
    case kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = half(src + 2 * i);
      return;
    case kBF16:
      for (int64_t i = 0; i < n; ++i)
        dst[i] = bits_to_f32(static_cast<uint32_t>(u16(src + 2 * i)) << 16);
      return;
    default:
      break;
  }
  for (int64_t i = 0; i < blocks; ++i) {
    const std::byte* b = src + static_cast<size_t>(i) * t.block_bytes;
    float* y = dst + i * t.block;
    switch (t.id) {
      case kQ4_0:
        q4(b, y, false);
        break;
      case kQ4_1:
        q4(b, y, true);
        break;
      case kQ5_0:
        q5(b, y, false);
        break;
      case kQ5_1:
        q5(b, y, true);
        break;
      case kQ8_0:
        q8_0(b, y);
        break;
      case kQ2_K:
        q2_k(b, y);
        break;
      case kQ3_K:
        q3_k(b, y);
        break;
      case kQ4_K:
        q45_k(b, y, false);
        break;
      case kQ5_K:
        q45_k(b, y, true);
        break;
      case kQ6_K:
        q6_k(b, y);
        break;
      case kIQ4_NL:
        iq4_nl(b, y);
        break;
      case kIQ4_XS:
        iq4_xs(b, y);
        break;
      case kTQ1_0:
        tq1_0(b, y);
        break;
      case kTQ2_0:
        tq2_0(b, y);
        break;
      case kMXFP4:
        mxfp4(b, y);
        break;
      case kNVFP4:
        nvfp4(b, y);
        break;
      case kIQ2_XXS:
        iq::iq2_xxs(b, y);
        break;
      case kIQ2_XS:
        iq::iq2_xs(b, y);
        break;
      case kIQ2_S:
        iq::iq2_s(b, y);
        break;
      case kIQ3_XXS:
        iq::iq3_xxs(b, y);
        break;
      case kIQ3_S:
        iq::iq3_s(b, y);
        break;
      case kIQ1_S:
        iq::iq1_s(b, y);
        break;
      case kIQ1_M:
        iq::iq1_m(b, y);
        break;
      default:
        return;  // not dequantizable: callers check first
    }
  }
}

}  // namespace lmeval::hf

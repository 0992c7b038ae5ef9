// reduced_attention.cpp's float16/bfloat16 flash attention against torch's own
// F.scaled_dot_product_attention (tests/fixtures/hf_arch/half_sdpa.json,
// scripts/gen_half_sdpa_goldens.py): the same inputs, made from the element index and a seed on
// both sides, and the output bits compared.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "half_bits.hpp"
#include "models/hf/reduced_attention.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;

// torch sums in vectors of its CPU capability's width: on an AVX-512 machine lm-eval is told, as
// torch was, to take the goldens' one (reduced_attention.cpp reads it on every call).
const json& goldens() {
  static const json g = [] {
    json j = half_bits::golden("half_sdpa.json");
    std::string cap = j["meta"].value("cpu_capability", "");
    std::transform(cap.begin(), cap.end(), cap.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (!cap.empty()) setenv("ATEN_CPU_CAPABILITY", cap.c_str(), 1);
    return j;
  }();
  return g;
}

struct Call {
  at::Tensor q, k, v, allow, bias;
  std::vector<FlashRow> rows;
  std::vector<int64_t> call_keys;
  double scale = 1.0;
};

// gen_half_sdpa_goldens.py's inputs and call for case c.
Call call_of(const json& c) {
  const at::ScalarType dt = c["dtype"] == "float16" ? at::kHalf : at::kBFloat16;
  const auto H = c["heads"].get<int64_t>(), T = c["rows"].get<int64_t>(),
             S = c["keys"].get<int64_t>(), D = c["head_size"].get<int64_t>();
  const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
  Call call;
  call.q = half_bits::operand({1, H, T, D}, seeds[0], dt) * 4;
  call.k = half_bits::operand({1, H, S, D}, seeds[1], dt);
  call.v = half_bits::operand({1, H, S, D}, seeds[2], dt);
  call.scale = 1.0 / std::sqrt(static_cast<double>(D));
  const std::string kind = c["kind"];
  if (kind == "decode") {
    call.rows = {FlashRow::kDecode};
    return call;
  }
  call.allow = at::ones({T, S}, at::kBool).tril(S - T);
  if (kind == "alibi") {
    std::vector<double> slope(static_cast<size_t>(H));
    for (int64_t h = 0; h < H; ++h) slope[static_cast<size_t>(h)] = std::ldexp(1.0, -(h + 1));
    const at::Tensor dist = at::arange(S, at::kDouble) - static_cast<double>(S - 1);
    call.bias =
        (at::tensor(slope, at::kDouble).view({1, H, 1, 1}) * dist.view({1, 1, 1, S})).to(dt);
  }
  return call;
}

at::Tensor run(const Call& c, at::Tensor* lse = nullptr) {
  return flash_attention_reduced(c.q, c.k, c.v, c.allow, c.bias, c.scale, c.rows, c.call_keys,
                                 goldens()["meta"]["threads"].get<int64_t>(), lse);
}

// FNV-1a 64 of float32 values' little-endian bytes, as the script hashes them.
std::string float_hash(const float* f, size_t n) {
  std::vector<uint16_t> halves;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = 0;
    std::memcpy(&u, f + i, sizeof u);
    halves.push_back(static_cast<uint16_t>(u & 0xFFFF));
    halves.push_back(static_cast<uint16_t>(u >> 16));
  }
  return half_bits::fnv1a64(halves);
}

TEST(HalfSdpa, OutputsHaveTorchsBits) {
  ASSERT_FALSE(goldens()["cases"].empty());
  for (const json& c : goldens()["cases"]) {
    const std::string what = c["name"].get<std::string>() + " " + c["dtype"].get<std::string>();
    at::Tensor lse;
    const at::Tensor out = run(call_of(c), &lse);
    const std::vector<uint16_t> bits = half_bits::bits_of(out);
    ASSERT_EQ(bits.size(), c["outputs"].get<size_t>()) << what;
    for (const json& d : c["differ_from_f32"])
      EXPECT_EQ(bits[d[0].get<size_t>()], d[1].get<uint16_t>()) << what << " output " << d[0];
    EXPECT_EQ(half_bits::fnv1a64(bits), c["hash"].get<std::string>()) << what;
    const at::Tensor l = lse.contiguous();
    EXPECT_EQ(float_hash(l.data_ptr<float>(), static_cast<size_t>(l.numel())),
              c["lse_hash"].get<std::string>())
        << what << " logsumexp";
  }
}

// generate computes a prompt's last token inside its prefill, lm-eval as one query
// (FlashRow::kPromptEnd): the prefill's last row, which the test above checks against torch.
TEST(HalfSdpa, PromptEndIsThePrefillsLastRow) {
  int checked = 0;
  for (const json& c : goldens()["cases"]) {
    if (c["kind"] != "causal") continue;
    const Call prefill = call_of(c);
    const int64_t T = prefill.q.size(2);
    Call last = prefill;
    last.q = prefill.q.narrow(2, T - 1, 1);
    last.allow = at::Tensor();
    last.rows = {FlashRow::kPromptEnd};
    const at::Tensor want = run(prefill).narrow(2, T - 1, 1);
    EXPECT_EQ(half_bits::bits_of(run(last)), half_bits::bits_of(want))
        << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// continuous batching prefills a prompt but its last token; the reference's prefill holds it:
// rows 0..T-2 over keys 0..T-2 with the call's length T are the full prefill's rows.
TEST(HalfSdpa, PrefillWithoutTheLastTokenIsTheFullPrefills) {
  int checked = 0;
  for (const json& c : goldens()["cases"]) {
    if (c["kind"] != "causal") continue;
    const Call full = call_of(c);
    const int64_t T = full.q.size(2);
    Call part = full;
    part.q = full.q.narrow(2, 0, T - 1);
    part.k = full.k.narrow(2, 0, T - 1);
    part.v = full.v.narrow(2, 0, T - 1);
    part.allow = full.allow.narrow(0, 0, T - 1).narrow(1, 0, T - 1);
    part.call_keys = {T};
    const at::Tensor want = run(full).narrow(2, 0, T - 1);
    EXPECT_EQ(half_bits::bits_of(run(part)), half_bits::bits_of(want))
        << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// MKL's half-input gemm in the kernel's two layouts (float32 outputs, every bit): the goldens'
// "gemm", from the cblas_gemm_f16f16f32 / cblas_gemm_bf16bf16f32 that torch links.
TEST(HalfSdpa, ProductsHaveMklsBits) {
  ASSERT_FALSE(goldens()["gemm"].empty());
  for (const json& c : goldens()["gemm"]) {
    const std::string what =
        c["layout"].get<std::string>() + " " + c["dtype"].get<std::string>() + " m " +
        std::to_string(c["m"].get<int64_t>()) + " n " + std::to_string(c["n"].get<int64_t>()) +
        " k " + std::to_string(c["k"].get<int64_t>()) + " offset " +
        std::to_string(c.value("offset", 0)) + " beta " + std::to_string(c.value("beta", false));
    const bool bf16 = c["dtype"] == "bfloat16";
    const at::ScalarType dt = bf16 ? at::kBFloat16 : at::kHalf;
    const auto m = c["m"].get<int64_t>(), n = c["n"].get<int64_t>(), k = c["k"].get<int64_t>();
    const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
    std::vector<float> out(static_cast<size_t>(m * n), 0.0f);
    if (c["layout"] == "qk") {
      const at::Tensor kT =
          half_bits::operand({m, k}, seeds[0], dt).to(at::kFloat).t().contiguous();
      const at::Tensor q = half_bits::operand({n, k}, seeds[1], dt).to(at::kFloat).contiguous();
      for (int64_t j = 0; j < n; ++j)
        mkl_half::qk(q.data_ptr<float>() + j * k, kT.data_ptr<float>(), m, k, m, n, 0, m, bf16,
                     out.data() + j * m);
    } else {
      const at::Tensor v = half_bits::operand({k, m}, seeds[0], dt).to(at::kFloat).contiguous();
      const at::Tensor p = half_bits::operand({n, k}, seeds[1], dt).to(at::kFloat).contiguous();
      const bool beta = c["beta"].get<bool>();
      if (beta) {
        const at::Tensor c0 = half_bits::operand({n, m}, seeds[2], at::kFloat).contiguous();
        std::copy(c0.data_ptr<float>(), c0.data_ptr<float>() + m * n, out.begin());
      }
      const auto offset = c["offset"].get<int64_t>();
      for (int64_t j = 0; j < n; ++j)
        mkl_half::pv(p.data_ptr<float>() + j * k, v.data_ptr<float>(), k, m, n, bf16, beta,
                     offset + j * m, out.data() + j * m);
    }
    for (const json& d : c["first_differ"]) {
      uint32_t u = 0;
      std::memcpy(&u, &out[d[0].get<size_t>()], sizeof u);
      EXPECT_EQ(u, d[1].get<uint32_t>()) << what << " output " << d[0];
    }
    EXPECT_EQ(float_hash(out.data(), out.size()), c["hash"].get<std::string>()) << what;
  }
}

// torch.matmul of float32 tensors as SDPA's math path calls it (MLA): the goldens' "math".
TEST(HalfSdpa, MathPathMatmulsHaveTorchsBits) {
  ASSERT_FALSE(goldens()["math"].empty());
  for (const json& c : goldens()["math"]) {
    const bool qk = c["layout"] == "qk";
    const auto R = c["rows"].get<int64_t>(), C = c["cols"].get<int64_t>(),
               K = c["k"].get<int64_t>();
    const auto seeds = c["seeds"].get<std::vector<uint64_t>>();
    const std::string what = c["layout"].get<std::string>() + " " + std::to_string(R) + "x" +
                             std::to_string(C) + " over " + std::to_string(K);
    const at::Tensor a = half_bits::operand({1, 2, R, K}, seeds[0], at::kFloat) * 0.7;
    const at::Tensor b =
        qk ? (half_bits::operand({1, 2, C, K}, seeds[1], at::kFloat) * 0.7).transpose(-1, -2)
           : half_bits::operand({1, 2, K, C}, seeds[1], at::kFloat) * 0.7;
    const at::Tensor out = math_matmul(a, b, qk).contiguous();
    EXPECT_EQ(float_hash(out.data_ptr<float>(), static_cast<size_t>(out.numel())),
              c["hash"].get<std::string>())
        << what;
  }
}

}  // namespace
}  // namespace lmeval::hf

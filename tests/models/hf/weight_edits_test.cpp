// Tensor edits' arithmetic: torch's float16/bfloat16 rounding (torch's own round trips of
// tests/fixtures/hf_ckpt/goldens.json), and small edits worked by hand.
#include "models/hf/weight_edits.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "lmeval/core/error.hpp"
#include "models/hf/ckpt_fixtures.hpp"

namespace lmeval::hf {
namespace {

float value_of(const nlohmann::json& v) {
  if (v.is_string())
    return v == "inf" ? std::numeric_limits<float>::infinity()
                      : -std::numeric_limits<float>::infinity();
  return static_cast<float>(v.get<double>());
}

TEST(HfWeightEdits, HalfAndBfloat16RoundingAsTorch) {
  const auto g = testing::ckpt_goldens()["rounding"];
  ASSERT_GT(g["float32"].size(), 60u);
  for (size_t i = 0; i < g["float32"].size(); ++i) {
    const float v = value_of(g["float32"][i]);
    EXPECT_EQ(round_to_half(v), value_of(g["float16"][i])) << v;
    EXPECT_EQ(round_to_bfloat16(v), value_of(g["bfloat16"][i])) << v;
  }
  EXPECT_TRUE(std::isnan(round_to_half(std::nanf(""))));
  EXPECT_TRUE(std::isnan(round_to_bfloat16(std::nanf(""))));
}

TensorView f32_view(const std::string& name, std::vector<int64_t> shape, std::vector<float>& v) {
  TensorView t;
  t.name = name;
  t.dtype = "F32";
  t.shape = std::move(shape);
  t.data = reinterpret_cast<const std::byte*>(v.data());
  t.nbytes = v.size() * 4;
  return t;
}

TEST(HfWeightEdits, LowRankProductsAndAddsByHand) {
  // W [2, 3] = 0; A [1, 3] = (1, 2, 3); B [2, 1] = (1, -1): B·A = ((1, 2, 3), (-1, -2, -3)).
  std::vector<float> w(6, 0.0f), a = {1, 2, 3}, b = {1, -1};
  const TensorView W = f32_view("w", {2, 3}, w), A = f32_view("a", {1, 3}, a),
                   B = f32_view("b", {2, 1}, b);
  TensorEdit lr;
  lr.kind = TensorEdit::Kind::kLowRank;
  lr.a = &A;
  lr.b = &B;
  lr.scale = 0.5;
  EXPECT_EQ(apply_edits(W, {lr}), (std::vector<float>{0.5f, 1, 1.5f, -0.5f, -1, -1.5f}));
  // Stored transposed ([in, out] = [3, 2]), as GPT-2's Conv1D weights are.
  std::vector<float> wt(6, 1.0f);
  const TensorView WT = f32_view("wt", {3, 2}, wt);
  lr.transposed = true;
  EXPECT_EQ(apply_edits(WT, {lr}), (std::vector<float>{1.5f, 0.5f, 2, 0, 2.5f, -0.5f}));
  // A replacement, then an add: bfloat16 rounding of operands and sum.
  std::vector<float> r = {1.00390625f, 3, 0, 0, 0, 0}, d = {1.00390625f, 0, 0, 0, 0, 0};
  const TensorView R = f32_view("r", {2, 3}, r), D = f32_view("d", {2, 3}, d);
  TensorEdit rep{TensorEdit::Kind::kReplace, &R};
  TensorEdit add{TensorEdit::Kind::kAdd, &D};
  add.round_to = "BF16";
  const std::vector<float> out = apply_edits(W, {rep, add});
  // 1.00390625 rounds to 1 in bfloat16 (a tie to even), twice.
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 3.0f);
  // Shapes that do not fit are an internal error (the makers of edits check them).
  std::vector<float> small(2, 0.0f);
  const TensorView S = f32_view("s", {2}, small);
  EXPECT_THROW(apply_edits(S, {rep}), RuntimeError);
}

TEST(HfWeightEdits, LargeProductsSharedOverThreadsAsComputedInDouble) {
  // 512 x 640 x rank 16 is past the size where rows are shared out over threads.
  const int64_t out = 512, in = 640, r = 16;
  std::vector<float> w(out * in), a(r * in), b(out * r);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::cos(0.11 * i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.53 * i + 1);
  const TensorView W = f32_view("w", {out, in}, w), A = f32_view("a", {r, in}, a),
                   B = f32_view("b", {out, r}, b);
  TensorEdit e;
  e.kind = TensorEdit::Kind::kLowRank;
  e.a = &A;
  e.b = &B;
  e.scale = 0.25;
  const std::vector<float> got = apply_edits(W, {e});
  double worst = 0;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      double s = 0;
      for (int64_t j = 0; j < r; ++j) s += double(b[o * r + j]) * a[j * in + i];
      worst = std::max(worst, std::abs(got[o * in + i] - (w[o * in + i] + 0.25 * s)));
    }
  EXPECT_LT(worst, 1e-5);
}

}  // namespace
}  // namespace lmeval::hf

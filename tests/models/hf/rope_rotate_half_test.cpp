// rope_rotate_half_cpu (rope.hpp) against the eager form it replaces, ATen's own three
// operations: x * cos + cat(-x2, x1) * sin.
#include <gtest/gtest.h>

#include "models/hf/rope.hpp"

namespace lmeval::hf {
namespace {

at::Tensor eager(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t h = x.size(-1) / 2;
  return x * cos + at::cat({-x.narrow(-1, h, h), x.narrow(-1, 0, h)}, -1) * sin;
}

TEST(RopeRotateHalf, GivesTheBitsOfTheEagerForm) {
  at::manual_seed(5);
  for (const int64_t d : {2, 6, 8, 64})
    for (const int64_t T : {1, 5})
      for (const bool per_row : {false, true}) {
        const int64_t B = 3, H = 4;
        // q as the attention takes it: [B, T, H, d] transposed to [B, H, T, d] (not contiguous),
        // scaled so that products round.
        const at::Tensor x = (at::randn({B, T, H, d}) * 3.7).transpose(1, 2);
        const at::Tensor pos = at::randn({per_row ? B : 1, 1, T, d}) * 11.0;
        const at::Tensor cos = pos.cos(), sin = pos.sin();
        const at::Tensor got = rope_rotate_half_cpu(x, cos, sin);
        ASSERT_TRUE(got.defined());
        EXPECT_TRUE(at::equal(got, eager(x, cos, sin)))
            << "d " << d << ", T " << T << (per_row ? ", a table per row" : "");
      }
  // A table broadcast over positions too (expand's zero strides).
  const at::Tensor x = at::randn({2, 3, 4, 8});
  const at::Tensor pos = at::randn({1, 1, 1, 8}).expand({2, 1, 4, 8});
  EXPECT_TRUE(
      at::equal(rope_rotate_half_cpu(x, pos.cos(), pos.sin()), eager(x, pos.cos(), pos.sin())));
}

TEST(RopeRotateHalf, LeavesOtherTypesAndShapesToTheEagerForm) {
  const at::Tensor c = at::randn({1, 1, 2, 8});
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({1, 2, 2, 8}).to(at::kDouble), c, c).defined());
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({1, 2, 2, 8}).to(at::kBFloat16), c, c).defined());
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({1, 2, 3, 8}), c, c).defined());  // positions
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({1, 2, 2, 6}), c, c).defined());  // dimensions
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({2, 2, 8}), c, c).defined());     // rank
  EXPECT_FALSE(rope_rotate_half_cpu(at::randn({1, 2, 2, 7}), at::randn({1, 1, 2, 7}),
                                    at::randn({1, 1, 2, 7}))
                   .defined());  // an odd size has no halves
}

}  // namespace
}  // namespace lmeval::hf

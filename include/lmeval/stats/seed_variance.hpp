// The standard error of a score averaged over few-shot seeds, counting both sources of variation:
// which items the benchmark happened to hold, and which few-shot examples each seed drew.
#pragma once

#include <cstddef>
#include <vector>

namespace lmeval::stats {

// x[k][i]: the score of item i under seed k (K >= 2 seeds, n >= 2 items, every cell present).
// Two-way random-effects ANOVA without replication, x_ik = mu + a_i + b_k + e_ik:
//   MS_items = K·Σ_i (r_i − m)²/(n − 1),  MS_seeds = n·Σ_k (c_k − m)²/(K − 1),
//   MS_res   = Σ_ik (x_ik − r_i − c_k + m)² / ((n − 1)(K − 1)),
// with r_i item means, c_k seed means, m the grand mean. Var(m) = σ_a²/n + σ_b²/K + σ_e²/(nK),
// whose unbiased estimate is (MS_items + MS_seeds − MS_res)/(nK). The parts are returned too:
// se_items² = MS_items/(nK) is the usual stderr of the seed-averaged items (seeds fixed), and
// se_seeds² = MS_seeds/(nK) the squared stderr of the K seed scores.
struct SeedItemStderr {
  double total =
      0;  // sqrt((MS_items + MS_seeds − MS_res)/(nK)), floored at se_items; NaN if undefined
  double items = 0;  // seeds held fixed
  double seeds = 0;  // sd of the seed scores / sqrt(K)
  double residual_ms = 0;
  std::size_t n = 0, k = 0;
};
SeedItemStderr seed_item_stderr(const std::vector<std::vector<double>>& x);

}  // namespace lmeval::stats

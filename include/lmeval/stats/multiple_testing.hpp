// Adjusted p-values for a family of tests (many tasks, metrics or subjects compared at once), so
// that "distinguishable" keeps its meaning when 57 subjects are compared in one go.
#pragma once

#include <vector>

namespace lmeval::stats {

// Holm's step-down adjustment (controls the family-wise error rate): statsmodels'
// multipletests(p, method="holm")[1]. NaN entries (undefined p-values) are left out of the family
// and stay NaN.
std::vector<double> holm_adjusted(const std::vector<double>& p);

// Benjamini-Hochberg step-up adjustment (controls the false discovery rate): statsmodels'
// multipletests(p, method="fdr_bh")[1]; NaN entries as for holm_adjusted.
std::vector<double> bh_adjusted(const std::vector<double>& p);

}  // namespace lmeval::stats

// Metric arithmetic shared by the registry's entries: exact_match, means, aggregation by name and
// standard errors (spec §7). The metrics and aggregations themselves are in registry.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

struct ExactMatchOptions {
  std::vector<std::string> regexes_to_ignore;
  bool ignore_case = false;
  bool ignore_punctuation = false;
  bool ignore_numbers = false;
};
// exact_match_hf_evaluate for one pair: 1.0 or 0.0.
double exact_match(std::string prediction, std::string reference, const ExactMatchOptions& opts);

// Python sum() left to right / len.
double py_mean(const std::vector<double>& xs);
// sqrt(sum((x-mu)^2)/(n-1)) (ddof=1) — the reference's sample_stddev.
double sample_stddev(const std::vector<double>& xs);
// mean_stderr: sample_stddev / sqrt(n).
double mean_stderr(const std::vector<double>& xs);

// Applies a registered aggregation to per-document items (numbers, or [a, b] pairs).
// Throws UserError for an unknown name.
double aggregate(const std::string& aggregation, const std::vector<Json>& items);

// The reference's stderr_for_metric, by the aggregation's registered StderrMethod: closed form for
// mean, bootstrap (CPython-exact resampling) for median/perplexity/f1/matthews_corrcoef/nanmean,
// none otherwise.
// nullopt means "N/A" (no stderr function, or fewer than 2 items, or iters <= 0).
std::optional<double> stderr_for(const std::string& aggregation, const std::vector<Json>& items,
                                 int64_t bootstrap_iters);
// bootstrap_stderr(f, xs, iters) with Random(i) per 1000-draw chunk.
double bootstrap_stderr(const std::string& aggregation, const std::vector<Json>& items,
                        int64_t iters);
// The aggregates of bootstrap_stderr's resamples (its standard error is their sample_stddev), for
// percentile intervals from the very resamples the reference draws.
std::vector<double> bootstrap_statistics(const std::string& aggregation,
                                         const std::vector<Json>& items, int64_t iters);
// Whether stderr_for uses the bootstrap for this aggregation.
bool has_bootstrap_stderr(const std::string& aggregation);

// Pooled stderr of a group (spec §7.6): the reference's pooled_sample_stderr, the stderr of the
// size-weighted mean (weight_by_size: true).
double pooled_sample_stderr(const std::vector<double>& stderrs, const std::vector<double>& sizes);
// The reference's unweighted_mean_stderr, sqrt(sum(se^2)) / k: the stderr of the plain mean of k
// subtask means (weight_by_size: false; Group.aggregate).
double unweighted_mean_stderr(const std::vector<double>& stderrs);
// The reference's combined_sample_stderr (pairwise merging of variances and means; unused by its
// groups, kept so that every stderr formula of api/metrics.py has its counterpart).
double combined_sample_stderr(const std::vector<double>& stderrs, const std::vector<double>& sizes,
                              const std::vector<double>& metrics);

// numpy-style argmax: first maximum; NaN wins if present.
size_t np_argmax(const std::vector<double>& xs);

}  // namespace lmeval

// The variance of a score averaged over K sampled answers per question, split into its
// between-question and within-question parts (Miller 2024, "Adding Error Bars to Evals", the
// section on resampling), and what more samples per question would buy.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lmeval::stats {

// Model: question i's score on its k-th sampled answer is s_ik = x_i + e_ik, with x_i the
// question's expected score and e_ik the sampling noise, Var(e_ik | i) = σ_i². The question's mean
// over K answers has variance Var(x) + σ_i²/K, so the eval mean over n questions has
//   Var(mean) = (Var(x) + E[σ_i²]/K) / n.
// Estimates (a balanced one-way random-effects ANOVA, questions as groups):
//   var_of_means = sample variance (ddof 1) of the question means      -> Var(x) + E[σ²]/K
//   within       = mean over questions of the sample variance (ddof 1)
//                  of its K scores                                     -> E[σ_i²]
//   between      = var_of_means − within/K                              -> Var(x) (may be < 0)
//   se           = sqrt(var_of_means / n)        the SE of the eval mean with these K samples
// and for K' samples per question on the same questions
//   se_with(K')  = sqrt((max(between, 0) + within/K') / n).
struct RepeatVariance {
  std::size_t n = 0, k = 0;
  double mean = 0;          // the eval mean: mean of the question means
  double var_of_means = 0;  // sample variance of the question means
  double within = 0;        // E[σ_i²]: variance of one answer's score around its question's mean
  // Var(x): variance of the questions' expected scores; unbiased, so below 0 by chance.
  double between = 0;
  double se = 0;          // sqrt(var_of_means / n)
  std::string undefined;  // why nothing is defined (then every number is NaN); empty otherwise

  bool defined() const { return undefined.empty(); }
  // Projected SE with `k_prime` samples per question (k_prime = infinity: the between part alone).
  double se_with(double k_prime) const;
  // The share of var_of_means that is sampling noise, (within/K) / (max(between, 0) + within/K):
  // what infinitely many samples per question could remove.
  double within_share() const;
  // How many times as many questions, at this K, give the SE that K' samples give:
  // se² / se_with(K')² (the "equivalent questions" factor of more sampling).
  double question_factor(double k_prime) const;
};

// x[i][k]: question i's score on its k-th answer. n >= 2 questions, every question with the same
// K >= 2 scores, all finite; otherwise the result is undefined with the reason.
RepeatVariance repeat_variance(const std::vector<std::vector<double>>& x);

}  // namespace lmeval::stats

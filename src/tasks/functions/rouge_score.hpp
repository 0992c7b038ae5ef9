// Google's rouge_score package (0.1.2) without stemming, and the aggregate that `evaluate`'s
// `rouge` metric returns: the scoring behind truthfulqa_gen's ROUGE columns and the iberian
// benches' rouge1_agg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmeval::tasks::rouge {

// rouge_score tokenize.tokenize(text, stemmer=None): Python's str.lower(), every run of characters
// other than ASCII a-z / 0-9 a separator.
std::vector<std::string> tokenize(std::string_view text);

// scoring.Score.
struct Score {
  double precision = 0, recall = 0, fmeasure = 0;
};

// rouge_scorer._score_ngrams over the n-grams of already tokenized texts (rougeN).
Score rouge_n(const std::vector<std::string>& target, const std::vector<std::string>& prediction,
              size_t n);

// rougeLsum: rouge_scorer._score_summary_level_lcs over the texts' "\n"-separated sentences.
Score rouge_lsum(const std::string& target, const std::string& prediction);

// evaluate.load("rouge").compute(predictions, references)["rouge1"] with its defaults (rouge1,
// rouge2, rougeL, rougeLsum; no stemmer; use_aggregator): the mid F-measure of rouge_score's
// scoring.BootstrapAggregator (1000 resamples, 50th percentile of the resampled means) of the
// pairs' ROUGE-1 scores, the resampling drawn from numpy's legacy RandomState seeded with
// `numpy_seed` (the seed evaluate's compute sets with temp_seed). `references` and `predictions`
// have the same size, at least 1.
double evaluate_rouge1(const std::vector<std::string>& references,
                       const std::vector<std::string>& predictions, uint32_t numpy_seed);

}  // namespace lmeval::tasks::rouge

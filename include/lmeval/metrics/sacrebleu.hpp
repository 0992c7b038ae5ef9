// Corpus-level BLEU, chrF/chrF++ and TER exactly as sacrebleu computes them with its defaults (the
// reference's bleu, chrf, chrf++ and ter aggregations in lm_eval/api/metrics.py).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lmeval {

// sacrebleu's reference layout: ref_streams[k][i] is the k-th reference of hypothesis i.

// sacrebleu.corpus_bleu(hyps, refs).score: tokenizer 13a, smoothing "exp", 4-gram orders.
double sacrebleu_corpus_bleu(const std::vector<std::string>& hyps,
                             const std::vector<std::vector<std::string>>& ref_streams);

// sacrebleu.corpus_chrf(hyps, refs, word_order=word_order).score: char order 6, beta 2,
// whitespace removed; word_order 0 is chrF, 2 is chrF++.
double sacrebleu_corpus_chrf(const std::vector<std::string>& hyps,
                             const std::vector<std::vector<std::string>>& ref_streams,
                             int word_order = 0);

// sacrebleu.corpus_ter(hyps, refs).score: Tercom tokenizer lowercasing, punctuation kept, no
// normalisation; edits (shifts included) over the average reference length, times 100.
double sacrebleu_corpus_ter(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams);

// The reference's bleu / chrf / chrf++ / ter aggregations (`name`) over per-document [gold, result]
// items, laid out for sacrebleu as lm_eval/api/metrics.py _sacreformat does.
double sacrebleu_aggregate(const std::string& name,
                           const std::vector<nlohmann::ordered_json>& items);

// sacrebleu's Tokenizer13a (mteval-v13a) of one line, as its tokens.
std::vector<std::string> sacrebleu_tokenize_13a(const std::string& line);

}  // namespace lmeval

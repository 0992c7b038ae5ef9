// sacrebleu's corpus chrF and chrF++ (metrics/chrf.py CHRF with its defaults).
#include <map>

#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/sacrebleu.hpp"

namespace lmeval {

namespace {

constexpr int kCharOrder = 6;
constexpr double kBeta = 2;

using Counts = std::map<std::u32string, long>;

// helpers.extract_all_char_ngrams(line, 6, include_whitespace=False): n-grams of code points of
// the line with its whitespace (str.split) removed.
std::vector<Counts> char_ngrams(const std::string& line) {
  std::u32string joined;
  for (const auto& w : unicode::py_split(line)) joined += unicode::decode(w);
  std::vector<Counts> out(kCharOrder);
  for (size_t n = 1; n <= kCharOrder; ++n)
    for (size_t i = 0; i + n <= joined.size(); ++i) ++out[n - 1][joined.substr(i, n)];
  return out;
}

// CHRF._remove_punctuation: a word's last (else first) punctuation character split off.
std::vector<std::u32string> words_without_punctuation(const std::string& line) {
  static const std::u32string kPuncts = U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::vector<std::u32string> out;
  for (const auto& s : unicode::py_split(line)) {
    std::u32string w = unicode::decode(s);
    if (w.size() == 1) {
      out.push_back(w);
    } else if (kPuncts.find(w.back()) != std::u32string::npos) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (kPuncts.find(w.front()) != std::u32string::npos) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(w);
    }
  }
  return out;
}

// helpers.extract_word_ngrams: n words joined by a space.
Counts word_ngrams(const std::vector<std::u32string>& words, size_t n) {
  Counts out;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::u32string g = words[i];
    for (size_t k = 1; k < n; ++k) g += U" " + words[i + k];
    ++out[g];
  }
  return out;
}

std::vector<Counts> all_ngrams(const std::string& line, int word_order) {
  auto out = char_ngrams(line);
  if (word_order > 0) {
    auto words = words_without_punctuation(line);
    for (int n = 1; n <= word_order; ++n) out.push_back(word_ngrams(words, static_cast<size_t>(n)));
  }
  return out;
}

// CHRF._compute_f_score without eps smoothing.
double f_score(const std::vector<long>& stats) {
  const double eps = 1e-16, factor = kBeta * kBeta;
  double avg_prec = 0, avg_rec = 0;
  int effective_order = 0;
  for (size_t i = 0; i + 2 < stats.size(); i += 3) {
    double n_hyp = static_cast<double>(stats[i]), n_ref = static_cast<double>(stats[i + 1]),
           n_match = static_cast<double>(stats[i + 2]);
    double prec = n_hyp > 0 ? n_match / n_hyp : eps;
    double rec = n_ref > 0 ? n_match / n_ref : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (effective_order == 0) {
    avg_prec = avg_rec = 0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0) {
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    return 100 * score;
  }
  return 0.0;
}

}  // namespace

double sacrebleu_corpus_chrf(const std::vector<std::string>& hyps,
                             const std::vector<std::vector<std::string>>& ref_streams,
                             int word_order) {
  std::vector<long> total(static_cast<size_t>(3 * (kCharOrder + word_order)), 0);
  for (size_t i = 0; i < hyps.size(); ++i) {
    auto hyp = all_ngrams(hyps[i], word_order);
    std::vector<long> best;
    double best_f = -1.0;
    for (const auto& stream : ref_streams) {
      if (i >= stream.size()) continue;
      auto ref = all_ngrams(stream[i], word_order);
      std::vector<long> stats;
      for (size_t k = 0; k < hyp.size(); ++k) {
        long match = 0, hyp_count = 0, ref_count = 0;
        for (const auto& [g, c] : hyp[k]) {
          hyp_count += c;
          auto it = ref[k].find(g);
          if (it != ref[k].end()) match += std::min(c, it->second);
        }
        for (const auto& [g, c] : ref[k]) ref_count += c;
        // _get_match_statistics: no hypothesis count where the reference has no n-gram
        stats.insert(stats.end(), {ref[k].empty() ? 0 : hyp_count, ref_count, match});
      }
      double f = f_score(stats);
      if (f > best_f) {
        best_f = f;
        best = std::move(stats);
      }
    }
    for (size_t k = 0; k < best.size() && k < total.size(); ++k) total[k] += best[k];
  }
  return f_score(total);
}

}  // namespace lmeval

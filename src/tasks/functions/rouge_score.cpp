// rouge_score's ROUGE-N / ROUGE-Lsum and evaluate's bootstrap-aggregated rouge1 (see the header).
#include "tasks/functions/rouge_score.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/stats/intervals.hpp"

namespace lmeval::tasks::rouge {

namespace {

double fmeasure(double p, double r) { return p + r > 0 ? 2 * p * r / (p + r) : 0.0; }

std::map<std::vector<std::string>, long> ngram_counts(const std::vector<std::string>& t, size_t n) {
  std::map<std::vector<std::string>, long> out;
  for (size_t i = 0; i + n <= t.size(); ++i)
    ++out[std::vector<std::string>(t.begin() + static_cast<long>(i),
                                   t.begin() + static_cast<long>(i + n))];
  return out;
}

std::vector<size_t> lcs_indices(const std::vector<std::string>& ref,
                                const std::vector<std::string>& can) {
  size_t rows = ref.size(), cols = can.size();
  std::vector<std::vector<int>> t(rows + 1, std::vector<int>(cols + 1, 0));
  for (size_t i = 1; i <= rows; ++i)
    for (size_t j = 1; j <= cols; ++j)
      t[i][j] = ref[i - 1] == can[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  std::vector<size_t> lcs;
  size_t i = rows, j = cols;
  while (i > 0 && j > 0) {
    if (ref[i - 1] == can[j - 1]) {
      lcs.insert(lcs.begin(), i - 1);
      --i;
      --j;
    } else if (t[i][j - 1] > t[i - 1][j]) {
      --j;
    } else {
      --i;
    }
  }
  return lcs;
}

// numpy's legacy RandomState (np.random.seed(s) for an int s: mt19937_seed, i.e. MT19937's
// init_genrand, then position 624) and the draws np.random.choice(np.arange(n), size=n) makes:
// RandomState.randint(0, n, size=n) in int64, whose 32-bit path (random_bounded_uint64_fill,
// use_masked) takes each MT19937 output masked to the smallest all-ones value covering n - 1 and
// rejects those above n - 1; n == 1 draws nothing.
class NumpyLegacyRandom {
 public:
  explicit NumpyLegacyRandom(uint32_t seed) : mt_(0) {
    PyRandom::State s{};
    s[0] = seed;
    for (uint32_t i = 1; i < 624; ++i) s[i] = 1812433253u * (s[i - 1] ^ (s[i - 1] >> 30)) + i;
    s[624] = 624;
    mt_.set_state(s);
  }
  size_t bounded(size_t n) {
    const auto rng = static_cast<uint32_t>(n - 1);
    if (rng == 0) return 0;
    uint32_t mask = rng;
    for (int shift : {1, 2, 4, 8, 16}) mask |= mask >> shift;
    uint32_t v = 0;
    while ((v = mt_.genrand_uint32() & mask) > rng) {
    }
    return v;
  }

 private:
  PyRandom mt_;
};

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::string low = unicode::py_lower(text);
  std::vector<std::string> out;
  std::string cur;
  for (char c : low) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Score rouge_n(const std::vector<std::string>& target, const std::vector<std::string>& prediction,
              size_t n) {
  auto t = ngram_counts(target, n), p = ngram_counts(prediction, n);
  long inter = 0, tc = 0, pc = 0;
  for (const auto& [g, c] : t) {
    auto it = p.find(g);
    inter += std::min(c, it == p.end() ? 0L : it->second);
    tc += c;
  }
  for (const auto& [g, c] : p) pc += c;
  Score s;
  s.precision = static_cast<double>(inter) / static_cast<double>(std::max(pc, 1L));
  s.recall = static_cast<double>(inter) / static_cast<double>(std::max(tc, 1L));
  s.fmeasure = fmeasure(s.precision, s.recall);
  return s;
}

Score rouge_lsum(const std::string& target, const std::string& prediction) {
  auto sents = [](const std::string& text) {
    std::vector<std::vector<std::string>> out;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string s = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (!s.empty()) out.push_back(tokenize(s));
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    return out;
  };
  auto ref = sents(target), can = sents(prediction);
  if (ref.empty() || can.empty()) return {};
  size_t m = 0, n = 0;
  std::map<std::string, int> cnt_r, cnt_c;
  for (const auto& s : ref) {
    m += s.size();
    for (const auto& w : s) ++cnt_r[w];
  }
  for (const auto& s : can) {
    n += s.size();
    for (const auto& w : s) ++cnt_c[w];
  }
  if (!n || !m) return {};
  long hits = 0;
  for (const auto& r : ref) {
    std::set<size_t> uni;
    for (const auto& c : can)
      for (size_t k : lcs_indices(r, c)) uni.insert(k);
    for (size_t k : uni) {
      const std::string& w = r[k];
      if (cnt_c[w] > 0 && cnt_r[w] > 0) {
        ++hits;
        --cnt_c[w];
        --cnt_r[w];
      }
    }
  }
  Score s;
  s.precision = static_cast<double>(hits) / static_cast<double>(n);
  s.recall = static_cast<double>(hits) / static_cast<double>(m);
  s.fmeasure = fmeasure(s.precision, s.recall);
  return s;
}

double evaluate_rouge1(const std::vector<std::string>& references,
                       const std::vector<std::string>& predictions, uint32_t numpy_seed) {
  if (references.empty() || references.size() != predictions.size())
    throw UserError("rouge: expected as many predictions as references, at least one");
  const size_t n = references.size();
  std::vector<double> f(n);
  for (size_t i = 0; i < n; ++i)
    f[i] = rouge_n(tokenize(references[i]), tokenize(predictions[i]), 1).fmeasure;
  // BootstrapAggregator.aggregate resamples each rouge type in turn from the one generator, rouge1
  // first, and evaluate restores numpy's state after compute: rouge1's 1000 resamples are the first
  // draws after seeding and the later types' draws change nothing returned.
  NumpyLegacyRandom rng(numpy_seed);
  std::vector<double> means(1000);
  for (double& mean : means) {
    // np.mean(sample, axis=0) of the (n, 3) sample: the column summed row by row, then / n.
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += f[rng.bounded(n)];
    mean = sum / static_cast<double>(n);
  }
  return stats::linear_quantile(std::move(means), 0.5);
}

}  // namespace lmeval::tasks::rouge

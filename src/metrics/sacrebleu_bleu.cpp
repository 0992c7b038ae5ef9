// sacrebleu's corpus BLEU (metrics/bleu.py BLEU with its defaults) and tokenizer 13a.
#include <cmath>
#include <map>

#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/sacrebleu.hpp"

namespace lmeval {

namespace {

constexpr int kMaxOrder = 4;

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// Python str.rstrip() with no argument.
std::string py_rstrip(const std::string& s) {
  std::u32string u = unicode::decode(s);
  while (!u.empty() && unicode::py_isspace(u.back())) u.pop_back();
  return unicode::encode(u);
}

using Ngrams = std::map<std::vector<std::string>, long>;

// helpers.extract_all_word_ngrams(line, 1, 4) over already-split tokens.
Ngrams word_ngrams(const std::vector<std::string>& tokens) {
  Ngrams out;
  for (size_t n = 1; n <= kMaxOrder; ++n)
    for (size_t i = 0; i + n <= tokens.size(); ++i)
      ++out[std::vector<std::string>(tokens.begin() + static_cast<long>(i),
                                     tokens.begin() + static_cast<long>(i + n))];
  return out;
}

double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

// Tokenizer13a.__call__ then TokenizerRegexp (tokenizers/tokenizer_13a.py, tokenizer_re.py).
std::vector<std::string> sacrebleu_tokenize_13a(const std::string& input) {
  std::string line = input;
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  line = " " + line + " ";
  static const auto k1 = PyRegex::compile(R"(([\{-\~\[-\` -\&\(-\+\:-\@\/]))");
  static const auto k2 = PyRegex::compile(R"(([^0-9])([\.,]))");
  static const auto k3 = PyRegex::compile(R"(([\.,])([^0-9]))");
  static const auto k4 = PyRegex::compile(R"(([0-9])(-))");
  line = k1->sub(R"( \1 )", line);
  line = k2->sub(R"(\1 \2 )", line);
  line = k3->sub(R"( \1 \2)", line);
  line = k4->sub(R"(\1 \2 )", line);
  return unicode::py_split(line);
}

double sacrebleu_corpus_bleu(const std::vector<std::string>& hyps,
                             const std::vector<std::vector<std::string>>& ref_streams) {
  // [sys_len, ref_len, correct x4, total x4], summed over segments (sum_of_lists).
  std::vector<long> stats(2 + 2 * kMaxOrder, 0);
  for (size_t i = 0; i < hyps.size(); ++i) {
    Ngrams ref_ngrams;
    std::vector<size_t> ref_lens;
    bool first = true;
    for (const auto& stream : ref_streams) {
      if (i >= stream.size()) continue;
      auto tokens = sacrebleu_tokenize_13a(py_rstrip(stream[i]));
      ref_lens.push_back(tokens.size());
      Ngrams these = word_ngrams(tokens);
      if (first) {
        ref_ngrams = std::move(these);
        first = false;
      } else {
        for (const auto& [g, c] : these) ref_ngrams[g] = std::max(ref_ngrams[g], c);
      }
    }
    auto hyp_tokens = sacrebleu_tokenize_13a(py_rstrip(hyps[i]));
    long hyp_len = static_cast<long>(hyp_tokens.size());
    // _get_closest_ref_len: the nearest length, the shorter on ties.
    long closest_diff = -1, closest_len = -1;
    for (size_t r : ref_lens) {
      long len = static_cast<long>(r), diff = std::labs(hyp_len - len);
      if (closest_diff == -1 || diff < closest_diff) {
        closest_diff = diff;
        closest_len = len;
      } else if (diff == closest_diff && len < closest_len) {
        closest_len = len;
      }
    }
    stats[0] += hyp_len;
    stats[1] += closest_len;
    for (const auto& [g, c] : word_ngrams(hyp_tokens)) {
      size_t n = g.size() - 1;
      stats[2 + kMaxOrder + n] += c;
      auto it = ref_ngrams.find(g);
      if (it != ref_ngrams.end()) stats[2 + n] += std::min(c, it->second);
    }
  }
  // BLEU.compute_bleu with smooth_method "exp", effective_order False.
  long sys_len = stats[0], ref_len = stats[1];
  double bp = 1.0;
  if (sys_len < ref_len)
    bp = sys_len > 0 ? std::exp(1 - static_cast<double>(ref_len) / static_cast<double>(sys_len))
                     : 0.0;
  bool any_correct = false;
  for (int n = 0; n < kMaxOrder; ++n) any_correct = any_correct || stats[2 + n] != 0;
  if (!any_correct) return 0.0;
  double precisions[kMaxOrder] = {0, 0, 0, 0};
  double smooth_mteval = 1.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    long correct = stats[2 + n], total = stats[2 + kMaxOrder + n];
    if (total == 0) break;
    if (correct == 0) {
      smooth_mteval *= 2;
      precisions[n] = 100.0 / (smooth_mteval * static_cast<double>(total));
    } else {
      precisions[n] = 100.0 * static_cast<double>(correct) / static_cast<double>(total);
    }
  }
  double sum = 0;  // Python sum() left to right
  for (double p : precisions) sum += my_log(p);
  return bp * std::exp(sum / kMaxOrder);
}

}  // namespace lmeval

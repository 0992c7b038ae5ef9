#include "tasks/functions/squad_metrics.hpp"

#include <algorithm>
#include <map>

#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "tasks/functions/py_text.hpp"

namespace lmeval::tasks::squad {

std::string normalize_answer(std::string_view s) {
  std::string low = unicode::py_lower(s);
  std::string kept;
  // string.punctuation is ASCII, and no ASCII byte occurs inside a multi-byte UTF-8 sequence.
  static const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  for (char c : low)
    if (punct.find(c) == std::string::npos) kept.push_back(c);
  kept = pyre::sub("\\b(a|an|the)\\b", " ", kept);
  auto words = unicode::py_split(kept);
  return pytext::join(words, " ", 0, words.size());
}

std::vector<std::string> get_tokens(std::string_view s) {
  if (s.empty()) return {};
  return unicode::py_split(normalize_answer(s));
}

int64_t common_count(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::map<std::string, int64_t> ca, cb;
  for (const auto& t : a) ++ca[t];
  for (const auto& t : b) ++cb[t];
  int64_t n = 0;
  for (const auto& [t, c] : ca) {
    auto it = cb.find(t);
    if (it != cb.end()) n += std::min(c, it->second);
  }
  return n;
}

Json compute_exact(const std::string& a_gold, const std::string& a_pred) {
  return Json(static_cast<int64_t>(normalize_answer(a_gold) == normalize_answer(a_pred)));
}

Json compute_f1(const std::string& a_gold, const std::string& a_pred) {
  auto gold = get_tokens(a_gold), pred = get_tokens(a_pred);
  int64_t same = common_count(gold, pred);
  if (gold.empty() || pred.empty()) return Json(static_cast<int64_t>(gold == pred));
  if (same == 0) return Json(0);
  double precision = 1.0 * static_cast<double>(same) / static_cast<double>(pred.size());
  double recall = 1.0 * static_cast<double>(same) / static_cast<double>(gold.size());
  return Json((2 * precision * recall) / (precision + recall));
}

}  // namespace lmeval::tasks::squad

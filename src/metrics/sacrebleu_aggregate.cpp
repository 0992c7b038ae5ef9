// The reference's corpus translation aggregations over per-document items (lm_eval/api/metrics.py
// bleu, chrf, chrfpp, ter with _sacreformat).
#include <algorithm>
#include <cstdint>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "lmeval/metrics/sacrebleu.hpp"

namespace lmeval {

namespace {

// lm_eval/api/metrics.py _sacreformat over [gold, prediction] items: golds become sacrebleu's
// reference streams (a string gold is one reference; lists are zipped, so the shortest list sets
// the number of streams, as zip does), one-element prediction lists are unwrapped.
std::pair<std::vector<std::string>, std::vector<std::vector<std::string>>> sacreformat(
    const std::string& name, const std::vector<Json>& items) {
  auto text = [&](const Json& v) -> std::string {
    if (!v.is_string())
      throw UserError(name + ": " + v.dump() + " is not a string", {},
                      "string targets and predictions");
    return v.get<std::string>();
  };
  std::vector<std::string> hyps;
  std::vector<std::vector<std::string>> refs;
  if (items.empty()) return {hyps, refs};
  bool listed = items[0].at(0).is_array();
  size_t streams = SIZE_MAX;
  for (const auto& it : items) {
    const Json& gold = it.at(0);
    if (gold.is_array() != listed)
      throw UserError(name + ": targets mix strings and lists", {}, "one kind of target per task");
    streams = std::min(streams, listed ? gold.size() : size_t{1});
  }
  refs.assign(streams, {});
  for (const auto& it : items) {
    const Json& gold = it.at(0);
    for (size_t k = 0; k < streams; ++k) refs[k].push_back(text(listed ? gold[k] : gold));
    const Json& pred = it.at(1);
    if (pred.is_array()) {
      if (pred.size() != 1) throw UserError(name + ": a prediction must be one string", {}, "");
      hyps.push_back(text(pred[0]));
    } else {
      hyps.push_back(text(pred));
    }
  }
  return {hyps, refs};
}

}  // namespace

double sacrebleu_aggregate(const std::string& name, const std::vector<Json>& items) {
  auto [hyps, refs] = sacreformat(name, items);
  if (name == "bleu") return sacrebleu_corpus_bleu(hyps, refs);
  if (name == "ter") return sacrebleu_corpus_ter(hyps, refs);
  return sacrebleu_corpus_chrf(hyps, refs, name == "chrf++" ? 2 : 0);
}

}  // namespace lmeval

#include "tasks/functions/squad_v2_metric.hpp"

#include <algorithm>
#include <map>

#include "lmeval/core/error.hpp"
#include "tasks/functions/squad_metrics.hpp"

namespace lmeval::tasks::squad {

namespace {

// A Python dict keyed by question id: insertion order of the first occurrence, last value wins.
template <class V>
class IdDict {
 public:
  void set(const std::string& id, V v) {
    auto [it, fresh] = index_.emplace(id, keys_.size());
    if (fresh) {
      keys_.push_back(id);
      values_.push_back(std::move(v));
    } else {
      values_[it->second] = std::move(v);
    }
  }
  const V* find(const std::string& id) const {
    auto it = index_.find(id);
    return it == index_.end() ? nullptr : &values_[it->second];
  }
  const V& at(const std::string& id) const {
    const V* v = find(id);
    if (!v) throw RuntimeError("squad_v2: no entry for question id '" + id + "' (KeyError)");
    return *v;
  }
  const std::vector<std::string>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<std::string> keys_;
  std::vector<V> values_;
};

// Python 3.11's sum() over ints and floats: one double added in order (3.12 compensates).
double sum_of(const IdDict<double>& scores, const std::vector<std::string>& qids) {
  double s = 0.0;
  for (const auto& q : qids) s += scores.at(q);
  return s;
}

// compute_score.make_eval_dict over `qids` (all questions when qids is the scores' own key list).
void add_eval(Json& out, const std::string& prefix, const IdDict<double>& exact,
              const IdDict<double>& f1, const std::vector<std::string>& qids) {
  const auto total = static_cast<double>(qids.size());
  out[prefix + "exact"] = 100.0 * sum_of(exact, qids) / total;
  out[prefix + "f1"] = 100.0 * sum_of(f1, qids) / total;
  out[prefix + "total"] = static_cast<int64_t>(qids.size());
}

// compute_score.apply_no_ans_threshold.
IdDict<double> apply_threshold(const IdDict<double>& scores, const IdDict<double>& na_probs,
                               const IdDict<int>& has_ans, double thresh) {
  IdDict<double> out;
  for (const auto& q : scores.keys())
    out.set(q, na_probs.at(q) > thresh ? (has_ans.at(q) ? 0.0 : 1.0) : scores.at(q));
  return out;
}

// compute_score.find_best_thresh: the score when every question whose no-answer probability is
// above a threshold abstains, maximised over the thresholds at each question's probability (the
// first threshold reaching the maximum; 0.0 when abstaining on all is best).
std::pair<double, double> best_thresh(const IdDict<std::string>& preds,
                                      const IdDict<double>& scores, const IdDict<double>& na_probs,
                                      const IdDict<int>& has_ans) {
  double cur = 0.0;
  for (const auto& q : has_ans.keys())
    if (!has_ans.at(q)) cur += 1.0;
  double best = cur, thresh = 0.0;
  std::vector<std::string> order = na_probs.keys();
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return na_probs.at(a) < na_probs.at(b);
  });
  for (const auto& q : order) {
    if (!scores.find(q)) continue;
    double diff = 0.0;
    if (has_ans.at(q))
      diff = scores.at(q);
    else if (!preds.at(q).empty())  // the raw prediction's truthiness, not its normalised form
      diff = -1.0;
    cur += diff;
    if (cur > best) {
      best = cur;
      thresh = na_probs.at(q);
    }
  }
  return {100.0 * best / static_cast<double>(scores.size()), thresh};
}

}  // namespace

Json squad_v2_compute(const std::vector<SquadV2Prediction>& predictions,
                      const std::vector<SquadV2Reference>& references, double no_answer_threshold) {
  // SquadV2._compute; the probabilities pass through the metric's float32 feature first.
  IdDict<double> na_probs;
  IdDict<std::string> preds;
  for (const auto& p : predictions) {
    na_probs.set(p.id, static_cast<double>(static_cast<float>(p.no_answer_probability)));
    preds.set(p.id, p.prediction_text);
  }
  IdDict<int>
      has_ans;  // make_qid_to_has_ans: bool(answers["text"]) (an int: vector<bool> has no &)
  for (const auto& r : references) has_ans.set(r.id, r.answers.empty() ? 0 : 1);
  std::vector<std::string> has_qids, no_qids;
  for (const auto& q : has_ans.keys()) (has_ans.at(q) ? has_qids : no_qids).push_back(q);

  // get_raw_scores: the best over the gold answers that normalise to something, else over [""].
  IdDict<double> exact_raw, f1_raw;
  for (const auto& r : references) {
    std::vector<std::string> gold;
    for (const auto& t : r.answers)
      if (!normalize_answer(t).empty()) gold.push_back(t);
    if (gold.empty()) gold.emplace_back();
    const std::string* pred = preds.find(r.id);
    if (!pred) continue;  // the script prints "Missing prediction for <id>" and skips it
    double e = -1.0, f = -1.0;
    for (const auto& g : gold) {
      e = std::max(e, compute_exact(g, *pred).get<double>());
      f = std::max(f, compute_f1(g, *pred).get<double>());
    }
    exact_raw.set(r.id, e);
    f1_raw.set(r.id, f);
  }
  if (exact_raw.size() == 0)
    throw RuntimeError("squad_v2: no question to score (the script divides by zero)");

  IdDict<double> exact = apply_threshold(exact_raw, na_probs, has_ans, no_answer_threshold);
  IdDict<double> f1 = apply_threshold(f1_raw, na_probs, has_ans, no_answer_threshold);
  Json out = Json::object();
  add_eval(out, "", exact, f1, exact.keys());
  if (!has_qids.empty()) add_eval(out, "HasAns_", exact, f1, has_qids);
  if (!no_qids.empty()) add_eval(out, "NoAns_", exact, f1, no_qids);
  auto [best_exact, exact_thresh] = best_thresh(preds, exact_raw, na_probs, has_ans);
  auto [best_f1, f1_thresh] = best_thresh(preds, f1_raw, na_probs, has_ans);
  out["best_exact"] = best_exact;
  out["best_exact_thresh"] = exact_thresh;
  out["best_f1"] = best_f1;
  out["best_f1_thresh"] = f1_thresh;
  return out;
}

}  // namespace lmeval::tasks::squad

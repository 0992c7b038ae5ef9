// evaluate's `squad_v2` metric (the Hub module evaluate.load("squad_v2"): its squad_v2.py
// SquadV2._compute over compute_score.py, the official SQuAD 2.0 evaluation script), which the
// reference's squadv2 task aggregates with. Answer scoring is squad_metrics.hpp's (compute_score's
// normalize_answer / get_tokens / compute_exact / compute_f1 are the same steps).
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks::squad {

// One entry of compute()'s `predictions` ({id, prediction_text, no_answer_probability}).
struct SquadV2Prediction {
  std::string id;
  std::string prediction_text;
  double no_answer_probability = 0.0;
};

// One entry of compute()'s `references` ({id, answers: {text: [...], ...}}).
struct SquadV2Reference {
  std::string id;
  std::vector<std::string> answers;
};

// squad_v2.compute(predictions=, references=, no_answer_threshold=): {exact, f1, total,
// HasAns_exact, HasAns_f1, HasAns_total (when a reference has answers), NoAns_* (when one has
// none), best_exact, best_exact_thresh, best_f1, best_f1_thresh}, in that order, scores x100.
// As the Python code: questions keyed by id (a repeated id counts once, its last entry's values),
// the no-answer probabilities rounded to float32 (the metric's feature type), sums in order.
// Throws RuntimeError for no references (the script's ZeroDivisionError).
Json squad_v2_compute(const std::vector<SquadV2Prediction>& predictions,
                      const std::vector<SquadV2Reference>& references,
                      double no_answer_threshold = 1.0);

}  // namespace lmeval::tasks::squad

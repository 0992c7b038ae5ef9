// The native squad_v2 metric (src/tasks/functions/squad_v2_metric.cpp, the squadv2 class task's
// aggregation) against evaluate's own squad_v2 module run through `evaluate`
// (tests/tasks/functions/squad_v2_metric_goldens.json, scripts/gen_squad_v2_metric_goldens.py):
// every key, type and bit of each result, on cases with empty gold answers, empty and
// punctuation-only predictions, no-answer probabilities around the threshold (float32), ties and
// repeated ids.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "support/test_support.hpp"
#include "tasks/functions/squad_v2_metric.hpp"

namespace {

using lmeval::Json;
using namespace lmeval::tasks::squad;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "squad_v2_metric_goldens.json");
  return Json::parse(in);
}

TEST(SquadV2Metric, MatchesEvaluateModule) {
  const Json g = goldens();
  ASSERT_GE(g["cases"].size(), 12u);
  int with_thresh = 0, float32_thresh = 0;
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<SquadV2Prediction> preds;
    for (const auto& p : c["predictions"])
      preds.push_back({p["id"].get<std::string>(), p["prediction_text"].get<std::string>(),
                       p["no_answer_probability"].get<double>()});
    std::vector<SquadV2Reference> refs;
    for (const auto& r : c["references"])
      refs.push_back(
          {r["id"].get<std::string>(), r["answers"]["text"].get<std::vector<std::string>>()});
    const Json& t = c["no_answer_threshold"];
    Json got = t.is_null() ? squad_v2_compute(preds, refs)
                           : squad_v2_compute(preds, refs, t.get<double>());
    with_thresh += !t.is_null();
    const Json& want = c["result"];
    // Same keys in the same order, same JSON types (int totals, float scores), same doubles.
    ASSERT_EQ(got.size(), want.size()) << got.dump();
    auto it = got.begin();
    for (auto w = want.begin(); w != want.end(); ++w, ++it) {
      EXPECT_EQ(it.key(), w.key());
      EXPECT_EQ(it.value().is_number_integer(), w.value().is_number_integer()) << w.key();
      if (w.value().is_number_float())
        EXPECT_EQ(it.value().get<double>(), w.value().get<double>()) << w.key();
      else
        EXPECT_EQ(it.value(), w.value()) << w.key();
    }
    const double bt = want["best_exact_thresh"].get<double>();
    float32_thresh += bt != 0.0 && static_cast<double>(static_cast<float>(bt)) == bt;
  }
  EXPECT_GE(with_thresh, 1);     // a case with no_answer_threshold given
  EXPECT_GE(float32_thresh, 3);  // thresholds come back as float32 values
}

TEST(SquadV2Metric, NoQuestionsIsAnError) {
  // The script divides by the number of questions (ZeroDivisionError in Python).
  EXPECT_THROW(squad_v2_compute({}, {}), lmeval::RuntimeError);
}

}  // namespace

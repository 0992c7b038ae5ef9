// The metric registry. Expected values: scikit-learn 1.x (f1_score, matthews_corrcoef) and the
// reference's lm_eval.api.metrics / registry (aggregations, higher_is_better), run in Python:
//   f1_score([1,0,1,1,0,0,1,0], [1,1,0,1,0,0,1,1]) = 0.6666666666666666
//   matthews_corrcoef(same) = 0.2581988897471611; matthews_corrcoef([0,1,2,2,1,0,2],
//   [0,2,2,2,1,1,0]) = 0.34375 weighted_perplexity([(-3,2),(-5,3)]) = 4.953032424395115;
//   bits_per_byte(same) = 2.3083120654223417 median([3,1,2,5]) = 3;
//   brier_score([(0,[.7,.3]),(1,[.4,.6])]) = 0.25000000000000006
#include <gtest/gtest.h>

#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/metrics/metrics.hpp"
#include "lmeval/metrics/registry.hpp"

using lmeval::Json;
namespace metrics = lmeval::metrics;

namespace {

std::vector<Json> pairs(const std::vector<int>& gold, const std::vector<int>& pred) {
  std::vector<Json> out;
  for (size_t i = 0; i < gold.size(); ++i) out.push_back(Json::array({gold[i], pred[i]}));
  return out;
}

}  // namespace

TEST(Metrics_Registry, DefaultsAreTheReferencesRegistry) {
  struct Row {
    const char* name;
    const char* aggregation;
    bool higher;
  };
  for (const Row& r : {Row{"acc", "mean", true}, Row{"acc_norm", "mean", true},
                       Row{"perplexity", "perplexity", false},
                       Row{"word_perplexity", "weighted_perplexity", false},
                       Row{"bits_per_byte", "bits_per_byte", false},
                       Row{"mcc", "matthews_corrcoef", true}, Row{"f1", "f1", true},
                       Row{"brier_score", "brier_score", false}, Row{"exact_match", "mean", true},
                       Row{"acc_mutual_info", "mean", true}, Row{"likelihood", "mean", true}}) {
    const metrics::Metric* m = metrics::find(r.name);
    ASSERT_NE(m, nullptr) << r.name;
    EXPECT_EQ(m->aggregation, r.aggregation) << r.name;
    EXPECT_EQ(m->higher_is_better, r.higher) << r.name;
    EXPECT_NE(metrics::find_aggregation(m->aggregation), nullptr) << r.name;
  }
  EXPECT_EQ(metrics::find("no_such_metric"), nullptr);
}

TEST(Metrics_Registry, AggregationsMatchScikitLearnAndTheReference) {
  auto items = pairs({1, 0, 1, 1, 0, 0, 1, 0}, {1, 1, 0, 1, 0, 0, 1, 1});
  EXPECT_DOUBLE_EQ(lmeval::aggregate("f1", items), 0.6666666666666666);
  EXPECT_DOUBLE_EQ(lmeval::aggregate("matthews_corrcoef", items), 0.2581988897471611);
  EXPECT_DOUBLE_EQ(
      lmeval::aggregate("matthews_corrcoef", pairs({0, 1, 2, 2, 1, 0, 2}, {0, 2, 2, 2, 1, 1, 0})),
      0.34375);
  std::vector<Json> ll = {Json::array({-3.0, 2}), Json::array({-5.0, 3})};
  EXPECT_DOUBLE_EQ(lmeval::aggregate("weighted_perplexity", ll), 4.953032424395115);
  EXPECT_DOUBLE_EQ(lmeval::aggregate("bits_per_byte", ll), 2.3083120654223417);
  EXPECT_DOUBLE_EQ(lmeval::aggregate("median", {Json(3), Json(1), Json(2), Json(5)}), 3.0);
  std::vector<Json> brier = {Json::array({0, Json::array({0.7, 0.3})}),
                             Json::array({1, Json::array({0.4, 0.6})})};
  EXPECT_NEAR(lmeval::aggregate("brier_score", brier), 0.25000000000000006, 1e-15);
  EXPECT_THROW(lmeval::aggregate("no_such_aggregation", items), lmeval::UserError);
}

TEST(Metrics_Registry, StderrMethodsAreTheReferencesStderrForMetric) {
  EXPECT_EQ(metrics::find_aggregation("mean")->stderr_method,
            metrics::StderrMethod::MeanClosedForm);
  for (const char* b : {"median", "matthews_corrcoef", "f1", "perplexity", "nanmean"})
    EXPECT_EQ(metrics::find_aggregation(b)->stderr_method, metrics::StderrMethod::Bootstrap) << b;
  for (const char* n : {"weighted_perplexity", "bits_per_byte", "brier_score", "bypass"})
    EXPECT_EQ(metrics::find_aggregation(n)->stderr_method, metrics::StderrMethod::None) << n;
  // mean_stderr([1, 0, 1, 1]) = stdev / sqrt(4) = 0.5 / 2.
  EXPECT_DOUBLE_EQ(*lmeval::stderr_for("mean", {Json(1), Json(0), Json(1), Json(1)}, 100), 0.25);
  EXPECT_FALSE(lmeval::stderr_for("brier_score", {Json(1), Json(0)}, 100).has_value());
}

TEST(Metrics_Registry, MultipleChoiceScoresFromOneDocument) {
  metrics::ChoiceScores s;
  s.lls = {-2.0, -1.0, -3.0};
  s.greedy = {false, true, false};
  s.is_gold = {false, true, false};
  s.gold_single = 1;
  s.gold = 1;
  s.pred = 1;
  s.pred_norm = 0;
  s.pred_bytes = 1;
  EXPECT_EQ(metrics::find("acc")->multiple_choice(s), Json(1.0));
  EXPECT_EQ(metrics::find("acc_norm")->multiple_choice(s), Json(0.0));
  EXPECT_EQ(metrics::find("exact_match")->multiple_choice(s), Json(1));
  EXPECT_EQ(metrics::find("f1")->multiple_choice(s), Json::array({1, 1}));
  // p_correct: softmax share of choice 1 = 1 / (e^-1 + 1 + e^-2); margin: -1 - (-2) = 1.
  EXPECT_NEAR(metrics::find("p_correct")->multiple_choice(s).get<double>(),
              1.0 / (std::exp(-1.0) + 1.0 + std::exp(-2.0)), 1e-15);
  EXPECT_DOUBLE_EQ(metrics::find("logprob_gold_margin")->multiple_choice(s).get<double>(), 1.0);
  EXPECT_FALSE(metrics::find("perplexity")->multiple_choice);
}

TEST(Metrics_Registry, GenerationExactMatchTakesItsKeywords) {
  const metrics::Metric* em = metrics::find("exact_match");
  metrics::GenerationScores s{Json("The Answer."), Json("the answer"), false};
  EXPECT_EQ(em->generate_until(s, Json::object()), Json(0.0));
  EXPECT_EQ(em->generate_until(s, Json{{"ignore_case", true}, {"ignore_punctuation", true}}),
            Json(1.0));
  metrics::GenerationScores multi{Json("b"), Json::array({"a", "b"}), true};
  EXPECT_EQ(em->generate_until(multi, Json::object()), Json(1.0));
}

TEST(Metrics_Registry, ARegisteredMetricIsFoundAndListed) {
  metrics::Aggregation longest{"test_longest",
                               [](const std::vector<Json>& items) {
                                 double best = 0;
                                 for (const auto& v : items) best = std::max(best, v.get<double>());
                                 return best;
                               },
                               nullptr, metrics::StderrMethod::Bootstrap};
  metrics::register_aggregation(longest);
  metrics::Metric m;
  m.name = "test_response_length";
  m.aggregation = "test_longest";
  m.output_types = "generate_until";
  m.generate_until = [](const metrics::GenerationScores& s, const Json&) {
    return Json(static_cast<double>(s.result.get<std::string>().size()));
  };
  metrics::register_metric(m);
  const metrics::Metric* found = metrics::find("test_response_length");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->generate_until({Json("four"), Json(""), false}, Json::object()), Json(4.0));
  EXPECT_DOUBLE_EQ(lmeval::aggregate("test_longest", {Json(1.0), Json(7.0), Json(3.0)}), 7.0);
  EXPECT_TRUE(lmeval::has_bootstrap_stderr("test_longest"));
  bool listed = false;
  for (const auto* x : metrics::all()) listed = listed || x == found;
  EXPECT_TRUE(listed);
  // Registering the same name again replaces the entry in place.
  m.higher_is_better = false;
  metrics::register_metric(m);
  EXPECT_EQ(metrics::find("test_response_length"), found);
  EXPECT_FALSE(found->higher_is_better);
}

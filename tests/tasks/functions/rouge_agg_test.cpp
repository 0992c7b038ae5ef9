// The native rouge1 / rouge1_agg of the iberian benches (src/tasks/functions/
// iberian_rouge_functions.cpp, rouge_score.cpp) against the reference's own rouge1_agg of
// catalan_bench, spanish_bench and galician_bench run through `evaluate`'s rouge metric and numpy
// (tests/tasks/functions/rouge_agg_goldens.json, scripts/gen_rouge_agg_goldens.py): every bit of
// the bootstrap's mid F-measure for 1 to 100 documents, several numpy seeds, empty predictions,
// texts without ASCII tokens, and successive calls of one run.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "support/test_support.hpp"
#include "tasks/functions/rouge_score.hpp"

namespace {

using lmeval::Json;

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "rouge_agg_goldens.json");
  return Json::parse(in);
}

const lmeval::TaskFunction& registered(const std::string& family, const std::string& name) {
  lmeval::register_builtin_task_functions();
  const auto* fn = lmeval::FunctionRegistry::instance().find(family, name);
  if (!fn) throw std::runtime_error(family + ":" + name + " is not registered");
  return *fn;
}

// Restores the run's numpy seed a test changes.
struct NumpySeed {
  explicit NumpySeed(std::optional<int64_t> s) : saved(lmeval::task_context().numpy_seed) {
    lmeval::task_context().numpy_seed = s;
  }
  ~NumpySeed() { lmeval::task_context().numpy_seed = saved; }
  std::optional<int64_t> saved;
};

TEST(RougeAgg, BootstrapMatchesEvaluate) {
  const Json g = goldens();
  ASSERT_GE(g["cases"].size(), 40u);
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<std::string> refs, preds;
    for (const auto& it : c["items"]) {
      refs.push_back(it[0].get<std::string>());
      preds.push_back(it[1].get<std::string>());
    }
    EXPECT_EQ(lmeval::tasks::rouge::evaluate_rouge1(refs, preds, c["seed"].get<uint32_t>()),
              c["result"].get<double>());
  }
}

TEST(RougeAgg, RegisteredForTheThreeModules) {
  const Json g = goldens();
  for (const char* fam : {"catalan_bench", "spanish_bench", "galician_bench"}) {
    SCOPED_TRACE(fam);
    const auto& metric = registered(fam, "utils.rouge1");
    const auto& agg = registered(fam, "utils.rouge1_agg");
    ASSERT_TRUE(metric.metric);
    ASSERT_TRUE(agg.aggregation);
    EXPECT_EQ(metric.name, "rouge1");
    for (const auto& c : g["cases"]) {
      SCOPED_TRACE(c["name"].get<std::string>());
      std::vector<Json> values;
      for (const auto& it : c["items"])
        values.push_back(metric.metric(it[0], it[1], Json::object(), false));
      ASSERT_EQ(values[0], c["items"][0]);
      NumpySeed seed(c["seed"].get<int64_t>());
      EXPECT_EQ(agg.aggregation(values), c["result"].get<double>());
    }
  }
}

TEST(RougeAgg, SuccessiveCallsOfOneRunSeeSameSeed) {
  const Json seq = goldens()["successive_calls"];
  ASSERT_EQ(seq["calls"].size(), 3u);
  NumpySeed seed(seq["seed"].get<int64_t>());
  const auto& agg = registered("catalan_bench", "utils.rouge1_agg");
  for (const auto& call : seq["calls"]) {
    std::vector<Json> values(call["items"].begin(), call["items"].end());
    EXPECT_EQ(agg.aggregation(values), call["result"].get<double>());
  }
}

TEST(RougeAgg, MultipleTargetsAndBadItems) {
  const auto& metric = registered("spanish_bench", "utils.rouge1");
  // any([[gold, result], ...]) over the golds: a non-empty pair is truthy.
  EXPECT_EQ(metric.metric(Json::array({"a", "b"}), "a", Json::object(), true), Json(1.0));
  const auto& agg = registered("spanish_bench", "utils.rouge1_agg");
  EXPECT_THROW(agg.aggregation({}), lmeval::UserError);
  EXPECT_THROW(agg.aggregation({Json(1.0)}), lmeval::UserError);
}

}  // namespace

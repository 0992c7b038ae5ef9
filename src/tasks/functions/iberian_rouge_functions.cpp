// rouge1 / rouge1_agg of the reference's catalan_bench, spanish_bench and galician_bench utils.py
// (cabreu_*, cocoteros_va, terretaqa; xlsum_es, cocoteros_es; summarization_gl): the three
// modules define both functions statement for statement alike (registered with each module's
// sha256 by scripts/gen_function_sources.py).
#include <random>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "tasks/functions/rouge_score.hpp"

namespace lmeval {

namespace {

// rouge1(items) returns its items: the reference's generate_until branch calls it with
// references= / predictions= first, gets a TypeError and then calls it with [gold, result], so
// each document's value is that pair. With multiple targets it scores every gold that way and
// keeps 1.0 when any value is truthy, which a non-empty pair always is.
Json rouge1_metric(const Json& gold, const Json& result, const Json&, bool multiple_target) {
  if (multiple_target) return Json(1.0);
  return Json::array({gold, result});
}

// rouge1_agg(items): evaluate.load("rouge").compute(predictions=preds, references=refs)["rouge1"].
// evaluate seeds numpy with the value at the global generator's position (its first state word
// right after np.random.seed(s), which is s) for compute and restores the state afterwards; nothing
// in a run without Python task code draws from numpy's global generator, so that seed is the
// run's numpy seed at every call.
double rouge1_agg(const std::vector<Json>& items) {
  const char* who = "rouge1_agg";
  if (items.empty())
    throw UserError(std::string(who) + ": no documents to aggregate (zip(*items) is empty)");
  std::vector<std::string> refs, preds;
  for (const auto& item : items) {
    if (!item.is_array() || item.size() < 2 || !item[0].is_string() || !item[1].is_string())
      throw UserError(std::string(who) + ": expected [reference, prediction] string pairs, got " +
                      item.dump());
    refs.push_back(item[0].get<std::string>());
    preds.push_back(item[1].get<std::string>());
  }
  const auto& seed = task_context().numpy_seed;
  // Unseeded (--seed with numpy None): numpy's global generator starts from OS entropy.
  const uint32_t s = seed ? static_cast<uint32_t>(*seed) : std::random_device{}();
  return tasks::rouge::evaluate_rouge1(refs, preds, s);
}

}  // namespace

void register_task_functions_iberian_rouge(FunctionRegistry& r) {
  for (const char* fam : {"catalan_bench", "spanish_bench", "galician_bench"}) {
    TaskFunction metric;
    metric.name = "rouge1";
    metric.metric = rouge1_metric;
    r.add(fam, "utils.rouge1", std::move(metric));
    TaskFunction agg;
    agg.aggregation = rouge1_agg;
    r.add(fam, "utils.rouge1_agg", std::move(agg));
  }
}

}  // namespace lmeval

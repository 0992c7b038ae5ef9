// The agieval port against the reference's own utils.py functions
// (tests/tasks/functions/agieval_port_goldens.jsonl, scripts/gen_library_port_goldens.py):
// parse_math_answer, is_equiv (None answers, strip_string's raising inputs), process_results on
// real MATH answers with right and wrong responses, and process_results_mcqa with several golds,
// ties, NaN and an empty choice.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/agieval.hpp"
#include "support/port_goldens.hpp"

namespace {

using lmeval::Json;
using lmeval::testing::port_goldens;
using namespace lmeval::tasks;

std::optional<std::string> opt(const Json& v) {
  if (v.is_null()) return std::nullopt;
  return v.get<std::string>();
}

TEST(AgievalPort, MatchesReferenceFunctions) {
  auto cases = port_goldens("agieval_port_goldens.jsonl");
  ASSERT_GT(cases.size(), 500u);
  std::map<std::string, int> counts;
  int right = 0, mcqa_right = 0;
  for (const auto& c : cases) {
    const std::string fn = c["fn"];
    ++counts[fn];
    if (fn == "parse_math_answer") {
      EXPECT_EQ(agieval_parse_math_answer(c["in"].get<std::string>()), opt(c["out"])) << c["in"];
    } else if (fn == "is_equiv") {
      EXPECT_EQ(agieval_is_equiv(c["a"].get<std::string>(), opt(c["b"])), c["out"].get<bool>())
          << c.dump();
    } else if (fn == "process_results") {
      EXPECT_EQ(agieval_process_results(c["doc"], c["response"].get<std::string>()), c["out"])
          << c.dump();
      right += c["out"]["acc"].get<int>();
    } else if (fn == "process_results_mcqa") {
      std::vector<double> lls;
      for (const auto& x : c["lls"])
        lls.push_back(x.is_string() ? std::numeric_limits<double>::quiet_NaN() : x.get<double>());
      Json got = agieval_process_results_mcqa(c["doc"], lls);
      EXPECT_EQ(got["acc"].get<double>(), c["out"]["acc"].get<double>()) << c.dump();
      EXPECT_EQ(got["acc_norm"].get<double>(), c["out"]["acc_norm"].get<double>()) << c.dump();
      mcqa_right += c["out"]["acc"].get<double>() > 0;
    } else {
      ADD_FAILURE() << "unknown case " << fn;
    }
  }
  EXPECT_GE(counts["parse_math_answer"], 35);
  EXPECT_GE(counts["process_results_mcqa"], 60);
  // Right answers are among the cases, not only wrong ones.
  EXPECT_GE(right, 150);
  EXPECT_GE(mcqa_right, 15);
}

TEST(AgievalPort, RegisteredUnderItsFamily) {
  lmeval::register_builtin_task_functions();
  const auto& r = lmeval::FunctionRegistry::instance();
  const auto* mcqa = r.find("agieval", "utils.process_results_mcqa");
  ASSERT_TRUE(mcqa && mcqa->process_results && mcqa->gold_choices);
  Json doc = Json::parse(R"({"choices": ["(A)a", "(B)bbbbbbbb"], "gold": [1]})");
  // Loglikelihoods come as (value, is_greedy) pairs.
  Json out = mcqa->process_results(doc, {Json::array({-1.0, false}), Json::array({-2.0, false})});
  EXPECT_EQ(out["acc"].get<double>(), 0.0);
  EXPECT_EQ(out["acc_norm"].get<double>(), 1.0);
  EXPECT_EQ(mcqa->gold_choices(doc), std::vector<size_t>{1});
}

}  // namespace

// The hendrycks_math port against the reference's own utils.py functions
// (tests/tasks/functions/hendrycks_math_port_goldens.jsonl, scripts/gen_library_port_goldens.py):
// strip_string (with the inputs where Python raises), is_equiv, the boxed-answer helpers,
// process_docs and process_results on real MATH solutions with right and wrong responses.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/hendrycks_math.hpp"
#include "support/port_goldens.hpp"

namespace {

using lmeval::Json;
using lmeval::testing::port_goldens;
using namespace lmeval::tasks;

TEST(HendrycksMathPort, MatchesReferenceFunctions) {
  std::map<int, std::string> solutions;
  for (const auto& r : port_goldens("math_dataset_goldens.jsonl"))
    if (r.contains("solution")) solutions[r["problem"].get<int>()] = r["solution"];
  auto cases = port_goldens("hendrycks_math_port_goldens.jsonl");
  ASSERT_GT(cases.size(), 800u);
  std::map<std::string, int> counts;
  int correct = 0, raised = 0;
  for (const auto& c : cases) {
    const std::string fn = c["fn"];
    ++counts[fn];
    if (fn == "strip_string") {
      const std::string in = c["in"];
      if (c.contains("raises")) {
        ++raised;
        EXPECT_THROW(hendrycks_strip_string(in), StripStringError) << in;
      } else {
        EXPECT_EQ(hendrycks_strip_string(in), c["out"].get<std::string>()) << in;
      }
    } else if (fn == "is_equiv") {
      EXPECT_EQ(hendrycks_is_equiv(c["a"].get<std::string>(), c["b"].get<std::string>()),
                c["out"].get<bool>())
          << c.dump();
    } else if (fn == "last_boxed_only_string") {
      auto got = last_boxed_only_string(c["in"].get<std::string>());
      if (c["out"].is_null()) {
        EXPECT_FALSE(got) << c.dump();
        continue;
      }
      ASSERT_TRUE(got) << c.dump();
      EXPECT_EQ(*got, c["out"].get<std::string>());
      auto removed = remove_boxed(*got);
      if (c["remove_boxed"].contains("raises"))
        EXPECT_FALSE(removed) << c.dump();
      else
        EXPECT_EQ(removed.value_or("(none)"), c["remove_boxed"]["out"].get<std::string>());
    } else if (fn == "process_docs") {
      auto got = hendrycks_math_process_docs({c["doc"]});
      ASSERT_EQ(got.size(), 1u);
      // Key order too: the reference's dataset.map keeps the columns in place.
      EXPECT_EQ(got[0].dump(), c["out"].dump());
    } else if (fn == "process_results") {
      Json doc = Json::object();
      doc["solution"] = c.contains("problem") ? solutions.at(c["problem"].get<int>())
                                              : c["solution"].get<std::string>();
      Json got = hendrycks_math_process_results(doc, c["response"].get<std::string>());
      EXPECT_EQ(got, c["out"]) << c.dump();
      correct += c["out"]["exact_match"].get<int>();
    } else {
      ADD_FAILURE() << "unknown case " << fn;
    }
  }
  // The goldens cover every helper, the raising branches and right answers, not only wrong ones.
  EXPECT_GE(counts["strip_string"], 60);
  EXPECT_GE(raised, 10);
  EXPECT_GE(counts["process_docs"], 30);
  EXPECT_GE(correct, 100);
}

TEST(HendrycksMathPort, RegisteredUnderItsFamily) {
  lmeval::register_builtin_task_functions();
  const auto& r = lmeval::FunctionRegistry::instance();
  const auto* docs = r.find("hendrycks_math", "utils.process_docs");
  const auto* results = r.find("hendrycks_math", "utils.process_results");
  ASSERT_TRUE(docs && docs->process_docs);
  ASSERT_TRUE(results && results->process_results);
  Json doc = Json::object();
  doc["solution"] = "so $x=\\boxed{\\dfrac12}$";
  EXPECT_EQ(results->process_results(doc, {Json("The answer is $0.5$.")})["exact_match"], 1);
  EXPECT_EQ(results->process_results(doc, {Json("The answer is $0.25$.")})["exact_match"], 0);
  // A solution without a boxed answer stops the run, as the reference's TypeError does.
  doc["solution"] = "no answer";
  EXPECT_THROW(results->process_results(doc, {Json("5")}), lmeval::UserError);
}

}  // namespace

// The drop port against the reference's own utils.py functions and scipy
// (tests/tasks/functions/drop_port_goldens.jsonl, scripts/gen_library_port_goldens.py):
// _normalize and _is_number on tricky tokens, get_metrics on span lists, process_docs and
// process_results with right and wrong predictions, and the Hungarian assignment against
// scipy.optimize.linear_sum_assignment on random matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/drop.hpp"
#include "support/port_goldens.hpp"

namespace {

using lmeval::Json;
using lmeval::testing::port_goldens;
using namespace lmeval::tasks;

TEST(DropPort, MatchesReferenceFunctions) {
  auto cases = port_goldens("drop_port_goldens.jsonl");
  ASSERT_GT(cases.size(), 700u);
  std::map<std::string, int> counts;
  int em_right = 0, f1_partial = 0;
  for (const auto& c : cases) {
    const std::string fn = c["fn"];
    ++counts[fn];
    if (fn == "normalize") {
      const std::string in = c["in"];
      EXPECT_EQ(drop_normalize(in), c["out"].get<std::string>()) << in;
      EXPECT_EQ(py_float(in).has_value(), c["is_number"].get<bool>()) << in;
    } else if (fn == "get_metrics") {
      auto [em, f1] = drop_get_metrics(c["pred"].get<std::vector<std::string>>(),
                                       c["gold"].get<std::vector<std::string>>());
      EXPECT_EQ(em, c["em"].get<double>()) << c.dump();
      EXPECT_EQ(f1, c["f1"].get<double>()) << c.dump();
      f1_partial += f1 > 0 && f1 < 1;
    } else if (fn == "linear_sum_assignment") {
      std::vector<double> cost;
      for (const auto& row : c["cost"])
        for (const auto& x : row) cost.push_back(x.get<double>());
      size_t rows = c["cost"].size(), cols = c["cost"][0].size();
      auto got = linear_sum_assignment(cost, rows, cols);
      ASSERT_EQ(got.size(), rows);
      double total = 0;
      size_t assigned = 0;
      std::vector<bool> used(cols, false);
      for (size_t r = 0; r < rows; ++r) {
        if (got[r] < 0) continue;
        ASSERT_FALSE(used[got[r]]) << "column used twice";
        used[got[r]] = true;
        total += cost[r * cols + got[r]];
        ++assigned;
      }
      EXPECT_EQ(assigned, std::min(rows, cols));
      EXPECT_NEAR(total, c["total"].get<double>(), 1e-12) << c.dump();
      if (c["unique"].get<bool>()) {
        // One optimum: the same pairs as scipy.
        for (size_t k = 0; k < c["rows"].size(); ++k)
          EXPECT_EQ(got[c["rows"][k].get<size_t>()], c["cols"][k].get<long>()) << c.dump();
      }
    } else if (fn == "process_docs") {
      auto got = drop_process_docs({c["doc"]});
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].dump(), c["out"].dump());
    } else if (fn == "process_results") {
      Json doc = Json::object();
      doc["answers"] = c["answers"];
      Json got = drop_process_results(doc, {c["pred"].get<std::string>()});
      // The reference's values and their Python types (int 0, float 1.0).
      EXPECT_EQ(got.dump(), c["out"].dump()) << c.dump();
      em_right += c["out"]["em"].get<double>() > 0;
    } else {
      ADD_FAILURE() << "unknown case " << fn;
    }
  }
  EXPECT_GE(counts["normalize"], 40);
  EXPECT_GE(counts["linear_sum_assignment"], 200);
  EXPECT_GE(counts["process_docs"], 40);
  // Right and partly right answers are among the cases.
  EXPECT_GE(em_right, 20);
  EXPECT_GE(f1_partial, 20);
}

TEST(DropPort, RegisteredUnderItsFamily) {
  lmeval::register_builtin_task_functions();
  const auto& r = lmeval::FunctionRegistry::instance();
  const auto* results = r.find("drop", "utils.process_results");
  ASSERT_TRUE(results && results->process_results);
  Json doc = Json::parse(R"({"answers": [["New York"], ["5"]]})");
  Json out = results->process_results(doc, {Json(" new york.")});
  EXPECT_EQ(out["em"].get<double>(), 1.0);
  EXPECT_EQ(out["f1"].get<double>(), 1.0);
}

}  // namespace

// The group stderr formulas against the reference's own functions
// (scripts/gen_group_stderr_goldens.py).
#include <gtest/gtest.h>

#include "lmeval/core/python_format.hpp"
#include "lmeval/metrics/metrics.hpp"
#include "support/test_support.hpp"

TEST(Metrics_GroupStderr, EveryFormulaAsTheReference) {
  auto g = nlohmann::ordered_json::parse(lmeval::testing::read_file(
      lmeval::testing::source_dir() / "tests/metrics/goldens/group_stderr.json"));
  ASSERT_GE(g.size(), 5u);
  for (const auto& c : g) {
    auto se = c["stderrs"].get<std::vector<double>>();
    auto sizes = c["sizes"].get<std::vector<double>>();
    auto metrics = c["metrics"].get<std::vector<double>>();
    SCOPED_TRACE(c["stderrs"].dump());
    using lmeval::py::float_repr;
    EXPECT_EQ(float_repr(lmeval::pooled_sample_stderr(se, sizes)), c["pooled"]);
    EXPECT_EQ(float_repr(lmeval::unweighted_mean_stderr(se)), c["unweighted"]);
    EXPECT_EQ(float_repr(lmeval::combined_sample_stderr(se, sizes, metrics)), c["combined"]);
  }
}

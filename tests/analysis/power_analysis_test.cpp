// `lm-eval power`: items needed from a guess (checked against statsmodels' NormalIndPower numbers
// written out here), from one run and from two runs' paired differences (spread recomputed here
// from the samples files).
#include "lmeval/analysis/power_analysis.hpp"

#include <cmath>

#include "analysis/run_fixture.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/stats/power.hpp"

using lmeval::testing::AnalysisRuns;
using lmeval::testing::read_file;
using Json = nlohmann::json;

namespace {
class Power : public AnalysisRuns {};

double sd_of(const std::vector<double>& x) {
  double m = 0, s = 0;
  for (double v : x) m += v / static_cast<double>(x.size());
  for (double v : x) s += (v - m) * (v - m);
  return std::sqrt(s / static_cast<double>(x.size() - 1));
}
}  // namespace

TEST(PowerGuess, AccuracyGuessMatchesStatsmodels) {
  // statsmodels: NormalIndPower().solve_power(effect_size=0.02 / (sqrt(0.6 * 0.4) * sqrt(2)),
  // alpha=0.05, power=0.8, ratio=0) = 9418.63..., so 9419 items for two independent runs at 60%
  // accuracy.
  lmeval::analysis::PowerOptions o;
  o.difference = 0.02;
  o.accuracy = 0.6;
  const auto p = lmeval::analysis::power_analysis({}, o);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].items_needed, 9419);
  // Correlated runs (two checkpoints): the spread of the difference shrinks by sqrt(1 - rho).
  o.correlation = 0.5;
  EXPECT_EQ(lmeval::analysis::power_analysis({}, o).rows[0].items_needed,
            4710);  // statsmodels: 4709.32
}

TEST(PowerGuess, BadInputIsAUserError) {
  lmeval::analysis::PowerOptions o;
  o.difference = 0.02;
  EXPECT_THROW(lmeval::analysis::power_analysis({}, o),
               lmeval::UserError);  // neither --accuracy nor --sd
  o.accuracy = 1.5;
  EXPECT_THROW(lmeval::analysis::power_analysis({}, o), lmeval::UserError);
  o.accuracy = 0.5;
  o.difference = 0;
  EXPECT_THROW(lmeval::analysis::power_analysis({}, o), lmeval::UserError);
}

TEST_F(Power, FromOneRunAndFromTwo) {
  const std::string out = (dir() / ("power_" + std::to_string(getpid()) + ".json")).string();
  auto r = lm("power " + run("a") + " --difference 0.05 --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(read_file(out));
  std::vector<double> xa, xb, d;
  for (const auto& [hash, v] : item_scores("a", "qa_one")) xa.push_back(v);
  bool found = false;
  for (const auto& row : j["rows"])
    if (row["task"] == "qa_one" && row["metric"] == "acc,none") {
      found = true;
      const double sd = sd_of(xa);
      EXPECT_NEAR(row["sd_item"].get<double>(), sd, 1e-12);
      EXPECT_EQ(row["items_needed"].get<double>(),
                std::ceil(lmeval::stats::items_needed(0.05, sd * std::sqrt(2.0))));
      EXPECT_NEAR(row["power_at_n"].get<double>(),
                  lmeval::stats::power_of_test(0.05, sd * std::sqrt(2.0 / 150)), 1e-12);
    }
  EXPECT_TRUE(found) << j.dump();
  auto r2 = lm("power " + run("a") + " " + run("b") + " --difference 0.05 --output " + out);
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  j = Json::parse(read_file(out));
  std::filesystem::remove(out);
  const auto sa = item_scores("a", "qa_one"), sb = item_scores("b", "qa_one");
  for (const auto& [hash, v] : sa) d.push_back(sb.at(hash) - v);
  for (const auto& row : j["rows"])
    if (row["task"] == "qa_one" && row["metric"] == "acc,none")
      EXPECT_EQ(row["items_needed"].get<double>(),
                std::ceil(lmeval::stats::items_needed(0.05, sd_of(d))));
  EXPECT_NE(r2.out.find("Items needed to detect a true difference of +0.0500 with 80% power"),
            std::string::npos)
      << r2.out;
}

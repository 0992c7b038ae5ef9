// leaderboard_math `exact_match` against math-verify itself: the cases of math-verify's own test
// suite scored as the reference's process_results scores them
// (tests/tasks/functions/math_verify_goldens.jsonl, scripts/gen_math_verify_goldens.py).
// lm-eval's exact_match approximates math-verify (docs/tasks.md, math), so this measures and
// guards the agreement rather than requiring every case.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "lmeval/tasks/functions/leaderboard.hpp"
#include "support/test_support.hpp"

namespace {

using Json = nlohmann::ordered_json;

std::vector<Json> math_verify_cases() {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "math_verify_goldens.jsonl");
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

// The measured figures (docs/tasks.md, math): 670/672 agree, no case where only lm-eval says 1,
// and all 427 strings paired with themselves agree.
constexpr size_t kAgreeFloor = 670, kFalsePositiveCeiling = 0, kSelfAgreeFloor = 427;

struct Agreement {
  size_t cases = 0, agree = 0, false_pos = 0, false_neg = 0;
  double rate() const {
    return cases ? static_cast<double>(agree) / static_cast<double>(cases) : 0;
  }
};

TEST(MathVerifyGolden, AgreementWithMathVerify) {
  auto cases = math_verify_cases();
  ASSERT_GT(cases.size(), 600u);
  Agreement all, self;
  size_t self_ours = 0, self_ref = 0;  // strings scored 1 against themselves
  for (const auto& c : cases) {
    Json doc = {{"solution", c["solution"]}};
    int ours = lmeval::tasks::math_exact_match(doc, c["response"].get<std::string>());
    int ref = c["exact_match"].get<int>();
    bool is_self = c["solution"] == c["response"];
    if (is_self) self_ours += ours, self_ref += ref;
    if (ours != ref && std::getenv("LMEVAL_MATH_VERIFY_DIFFS"))
      std::printf("ours %d math-verify %d: %s | %s\n", ours, ref, c["solution"].dump().c_str(),
                  c["response"].dump().c_str());
    for (Agreement* a : {&all, is_self ? &self : nullptr}) {
      if (!a) continue;
      ++a->cases;
      if (ours == ref)
        ++a->agree;
      else if (ours)
        ++a->false_pos;
      else
        ++a->false_neg;
    }
  }
  std::printf(
      "math-verify agreement: %zu/%zu (%.1f%%; %zu ours-only 1, %zu math-verify-only 1); "
      "each string against itself: %zu/%zu agree (1 for lm-eval: %zu, for math-verify: %zu)\n",
      all.agree, all.cases, 100 * all.rate(), all.false_pos, all.false_neg, self.agree, self.cases,
      self_ours, self_ref);
  // Floors at the measured figures: a change that lowers them fails. A 1 where math-verify says
  // 0 (a false positive) is worse than a miss, so those may not grow at all.
  EXPECT_EQ(all.cases, 672u);
  EXPECT_GE(all.agree, kAgreeFloor);
  EXPECT_LE(all.false_pos, kFalsePositiveCeiling);
  EXPECT_GE(self.agree, kSelfAgreeFloor);
  // Every answer must match itself at least wherever math-verify's does.
  EXPECT_GE(self_ours, self_ref);
}

}  // namespace

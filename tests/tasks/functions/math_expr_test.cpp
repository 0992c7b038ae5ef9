// lm-eval's LaTeX expression reading and answer comparison (tasks/functions/math/) against the
// reference's libraries: latex2sympy2_extended + sympy for what a LaTeX string is and what it
// evaluates to, math-verify for whether two answers match
// (tests/tasks/functions/math_expr_goldens.jsonl, scripts/gen_math_expr_goldens.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "lmeval/tasks/functions/leaderboard.hpp"
#include "lmeval/tasks/functions/math/evaluate.hpp"
#include "lmeval/tasks/functions/math/latex_parser.hpp"
#include "support/test_support.hpp"

namespace {

using Json = nlohmann::ordered_json;
namespace m = lmeval::tasks::math;

std::vector<Json> golden(const char* kind) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" / "math_expr_goldens.jsonl");
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) {
      Json j = Json::parse(line);
      if (j["kind"] == kind) out.push_back(std::move(j));
    }
  return out;
}

std::string shape(const m::Node& n) {
  switch (n.kind) {
    case m::Kind::Relation:
    case m::Kind::And:
      return "relation";
    case m::Kind::Interval:
      return "interval";
    case m::Kind::Tuple:
      return "tuple";
    case m::Kind::FiniteSet:
    case m::Kind::Union:
    case m::Kind::SetConst:
      return "set";
    case m::Kind::Matrix:
      return "matrix";
    default:
      return "expr";
  }
}

TEST(MathExpr, ParsesAndEvaluatesLikeLatex2Sympy) {
  auto cases = golden("parse");
  ASSERT_GT(cases.size(), 90u);
  for (const auto& c : cases) {
    std::string latex = c["latex"];
    SCOPED_TRACE(latex);
    m::NodePtr v = m::parse_latex(latex);
    EXPECT_EQ(v != nullptr, c["parses"].get<bool>());
    if ((v != nullptr) != c["parses"].get<bool>()) continue;
    if (!v) continue;
    EXPECT_EQ(shape(*v), c["shape"].get<std::string>());
    if (!c.contains("value") || c["value"].is_null()) continue;
    std::map<std::string, m::Complex> symbols;
    for (const auto& [name, val] : c["symbols"].items()) symbols[name] = val.get<double>();
    auto got = m::evaluate_at(*v, symbols);
    ASSERT_TRUE(got && got->is_scalar());
    m::Complex want(c["value"][0].get<double>(), c["value"][1].get<double>());
    EXPECT_NEAR(std::abs(got->v[0] - want), 0.0, 1e-9 * std::max(1.0, std::abs(want)))
        << "got " << got->v[0].real() << "+" << got->v[0].imag() << "i";
  }
}

TEST(MathExpr, HeldOutAgreementWithMathVerify) {
  auto cases = golden("verify");
  ASSERT_GT(cases.size(), 150u);
  size_t agree = 0, false_pos = 0, false_neg = 0;
  for (const auto& c : cases) {
    Json doc = {{"solution", c["solution"]}};
    int ours = lmeval::tasks::math_exact_match(doc, c["response"].get<std::string>());
    int ref = c["exact_match"].get<int>();
    if (ours == ref) ++agree;
    else (ours ? false_pos : false_neg)++;
    if (ours != ref && std::getenv("LMEVAL_MATH_VERIFY_DIFFS"))
      std::printf("ours %d math-verify %d: %s | %s\n", ours, ref, c["solution"].dump().c_str(),
                  c["response"].dump().c_str());
  }
  std::printf("held-out agreement with math-verify: %zu/%zu (%zu ours-only 1, %zu math-verify-only 1)\n",
              agree, cases.size(), false_pos, false_neg);
  EXPECT_GE(agree, cases.size());
  EXPECT_EQ(false_pos, 0u);
}

}  // namespace

namespace {

// Responses are model output of any size: deep nesting and long texts are scored, not crashed on.
TEST(MathExpr, DeepAndLongInputsAreScored) {
  EXPECT_EQ(m::parse_latex(std::string(20000, '(') + "1" + std::string(20000, ')')), nullptr);
  std::string long_response;
  for (int i = 0; i < 3000; ++i) long_response += "Step " + std::to_string(i) + ": $x_{" + std::to_string(i) + "} = " + std::to_string(i) + "$. ";
  long_response += "Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.";
  Json doc = {{"solution", "so it is $\\boxed{\\dfrac12}$."}};
  EXPECT_EQ(lmeval::tasks::math_exact_match(doc, long_response), 1);
  EXPECT_EQ(lmeval::tasks::math_exact_match(doc, std::string(100000, '{')), 0);
}

}  // namespace

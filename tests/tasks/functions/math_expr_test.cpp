// lm-eval's LaTeX expression reading and answer comparison (tasks/functions/math/) against the
// reference's libraries: latex2sympy2_extended + sympy for what a LaTeX string is and what it
// evaluates to, math-verify for whether two answers match
// (tests/tasks/functions/math_expr_goldens.jsonl, scripts/gen_math_expr_goldens.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "lmeval/tasks/functions/leaderboard.hpp"
#include "lmeval/tasks/functions/math/evaluate.hpp"
#include "lmeval/tasks/functions/math/latex_parser.hpp"
#include "support/test_support.hpp"

namespace {

using Json = nlohmann::ordered_json;
namespace m = lmeval::tasks::math;

std::vector<Json> golden(const char* kind) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "math_expr_goldens.jsonl");
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
  ASSERT_GT(cases.size(), 1100u);
  size_t agree = 0, false_pos = 0, false_neg = 0;
  for (const auto& c : cases) {
    Json doc = {{"solution", c["solution"]}};
    int ours = lmeval::tasks::math_exact_match(doc, c["response"].get<std::string>());
    int ref = c["exact_match"].get<int>();
    if (ours == ref)
      ++agree;
    else
      (ours ? false_pos : false_neg)++;
    if (ours != ref && std::getenv("LMEVAL_MATH_VERIFY_DIFFS"))
      std::printf("ours %d math-verify %d: %s | %s\n", ours, ref, c["solution"].dump().c_str(),
                  c["response"].dump().c_str());
  }
  std::printf(
      "held-out agreement with math-verify: %zu/%zu (%zu ours-only 1, %zu math-verify-only 1)\n",
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
  for (int i = 0; i < 3000; ++i)
    long_response += "Step " + std::to_string(i) + ": $x_{" + std::to_string(i) +
                     "} = " + std::to_string(i) + "$. ";
  long_response += "Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.";
  Json doc = {{"solution", "so it is $\\boxed{\\dfrac12}$."}};
  EXPECT_EQ(lmeval::tasks::math_exact_match(doc, long_response), 1);
  EXPECT_EQ(lmeval::tasks::math_exact_match(doc, std::string(100000, '{')), 0);
}

}  // namespace

namespace {

// Real MATH solutions (Hendrycks' test problems) against answers written as models write them
// (tests/tasks/functions/math_dataset_goldens.jsonl, scripts/gen_math_dataset_goldens.py).
// The solution with its last \boxed{...} holding `content` instead.
std::string with_boxed(const std::string& solution, const std::string& content) {
  size_t k = solution.rfind("\\boxed{"), e = k + 6;
  for (int depth = 0;; ++e) {
    depth += solution[e] == '{' ? 1 : solution[e] == '}' ? -1 : 0;
    if (depth == 0) break;
  }
  return solution.substr(0, k) + "\\boxed{" + content + "}" + solution.substr(e + 1);
}

// The whole-solution variants: cut, without dollar signs, or followed by a Minerva line.
std::string edited(const std::string& solution, const Json& c) {
  const std::string edit = c["edit"];
  if (edit == "truncate_60") return solution.substr(0, c["keep_bytes"].get<size_t>());
  if (edit == "strip_dollars") {
    std::string out;
    for (char ch : solution)
      if (ch != '$') out += ch;
    return out;
  }
  return solution + c["appended"].get<std::string>();
}

TEST(MathExpr, MathSolutionsAgreementWithMathVerify) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "math_dataset_goldens.jsonl");
  std::vector<Json> lines;
  std::map<int, std::string> solutions;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      lines.push_back(Json::parse(line));
      if (lines.back().contains("solution"))
        solutions[lines.back()["problem"]] = lines.back()["solution"];
    }
  std::map<std::string, std::array<size_t, 3>> by_form;  // agree, ours-only 1, math-verify-only 1
  size_t cases = 0, agree = 0, false_pos = 0, self_ours = 0, self_ref = 0;
  for (const auto& c : lines) {
    const std::string& solution = solutions.at(c["problem"]);
    std::string response =
        c.contains("response")               ? c["response"].get<std::string>()
        : c.contains("response_solution_of") ? solutions.at(c["response_solution_of"])
        : c.contains("boxed_replacement")    ? with_boxed(solution, c["boxed_replacement"])
        : c.contains("edit")                 ? edited(solution, c)
                                             : solution;
    int ours = lmeval::tasks::math_exact_match(Json{{"solution", solution}}, response);
    int ref = c["exact_match"].get<int>();
    auto& f = by_form[c["form"].get<std::string>()];
    ++cases;
    if (ours == ref)
      ++agree, ++f[0];
    else if (ours)
      ++false_pos, ++f[1];
    else
      ++f[2];
    if (c["form"] == "self") self_ours += ours, self_ref += ref;
    if (ours != ref && std::getenv("LMEVAL_MATH_VERIFY_DIFFS"))
      std::printf(
          "[%s] ours %d math-verify %d: %s | %s\n", c["form"].get<std::string>().c_str(), ours, ref,
          Json(solution.substr(solution.size() > 160 ? solution.size() - 160 : 0)).dump().c_str(),
          Json(response.substr(response.size() > 200 ? response.size() - 200 : 0)).dump().c_str());
  }
  // exact_match_original (Minerva extraction and normalisation, sympy's parse_latex equivalence)
  // on the same pairs.
  size_t orig_cases = 0, orig_agree = 0, orig_false_pos = 0;
  for (const auto& c : lines) {
    if (!c.contains("exact_match_original")) continue;
    const std::string& solution = solutions.at(c["problem"]);
    Json doc = {{"solution", solution},
                {"answer", lmeval::tasks::math_remove_boxed(
                               lmeval::tasks::math_last_boxed_only_string(solution))}};
    int ours = lmeval::tasks::math_exact_match_original(doc, c["response"].get<std::string>());
    int ref = c["exact_match_original"].get<int>();
    ++orig_cases;
    if (ours == ref)
      ++orig_agree;
    else if (ours)
      ++orig_false_pos;
    if (ours != ref && std::getenv("LMEVAL_MATH_VERIFY_DIFFS"))
      std::printf("[original %s] ours %d reference %d: %s | %s\n",
                  c["form"].get<std::string>().c_str(), ours, ref, doc["answer"].dump().c_str(),
                  c["response"].dump().c_str());
  }
  std::printf("exact_match_original: %zu/%zu agree (%zu ours-only 1)\n", orig_agree, orig_cases,
              orig_false_pos);
  EXPECT_GT(orig_cases, 2000u);
  EXPECT_EQ(orig_false_pos, 0u);
  EXPECT_GE(orig_agree, orig_cases - orig_cases / 100);  // symbolic equivalences are not attempted
  std::printf("MATH solutions: %zu/%zu agree (%zu ours-only 1);", agree, cases, false_pos);
  for (const auto& [form, f] : by_form)
    std::printf(" %s %zu/%zu-%zu", form.c_str(), f[0], f[1], f[2]);
  std::printf("; solutions matching themselves: lm-eval %zu, math-verify %zu\n", self_ours,
              self_ref);
  ASSERT_GT(cases, 2800u);
  EXPECT_GE(agree, cases);
  EXPECT_EQ(false_pos, 0u);
}

}  // namespace

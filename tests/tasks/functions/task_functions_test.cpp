// Built-in doc functions (classic and leaderboard families) against CPython/numpy expectations
// (tests/tasks/functions/task_functions_golden.jsonl, scripts/gen_task_function_goldens.py) and
// hand-made cases for MATH and the registry.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "lmeval/core/py_random.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "lmeval/tasks/functions/leaderboard.hpp"
#include "support/test_support.hpp"

namespace {

using Json = nlohmann::ordered_json;
using namespace lmeval::tasks;

std::vector<Json> golden_cases() {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "task_functions_golden.jsonl");
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

TEST(TaskFunctionsGolden, AllCasesMatchPython) {
  auto cases = golden_cases();
  ASSERT_GT(cases.size(), 250u);
  std::map<std::string, int> counts;
  lmeval::PyRandom gpqa_rng(0);
  for (const auto& c : cases) {
    const std::string fn = c["fn"];
    const Json& doc = c["doc"];
    const Json& out = c["out"];
    ++counts[fn];
    if (fn == "hellaswag") {
      EXPECT_EQ(hellaswag_process_doc(doc), out) << doc.dump();
    } else if (fn == "winogrande") {
      EXPECT_EQ(winogrande_doc_to_text(doc), out["text"]);
      EXPECT_EQ(winogrande_doc_to_target(doc), out["target"]);
      EXPECT_EQ(winogrande_doc_to_choice(doc), out["choice"]);
    } else if (fn == "wsc") {
      EXPECT_EQ(wsc_doc_to_text(doc), out.get<std::string>()) << doc.dump();
    } else if (fn == "logiqa") {
      EXPECT_EQ(logiqa_doc_to_text(doc), out["text"].get<std::string>());
      EXPECT_EQ(logiqa_doc_to_target(doc), out["target"].get<int>());
    } else if (fn == "truthfulqa_mc2") {
      std::vector<Json> results;
      for (const auto& ll : doc["lls"]) results.push_back(Json::array({ll, false}));
      // numpy's SIMD exp may differ from libm's exp by an ulp; the rest is exact.
      double got = truthfulqa_mc2(doc["doc"], results), want = out.get<double>();
      EXPECT_NEAR(got, want, 4 * std::numeric_limits<double>::epsilon() * std::fabs(want))
          << doc.dump();
      if (got == want) ++counts["truthfulqa_mc2_exact"];
    } else if (fn == "wikitext") {
      const std::string page = doc["page"];
      EXPECT_EQ(wikitext_detokenizer(page), out["detok"].get<std::string>());
      EXPECT_EQ(wikitext_word_count(page), out["words"].get<size_t>());
      EXPECT_EQ(page.size(), out["bytes"].get<size_t>());
    } else if (fn == "gpqa_seed0_sequence") {
      // Consecutive documents share one generator, as the reference's global random.
      Json r = gpqa_process_doc(doc, gpqa_rng);
      EXPECT_EQ(r["choice1"], out["choices"][0]);
      EXPECT_EQ(r["choice4"], out["choices"][3]);
      EXPECT_EQ(r["answer"], out["answer"]);
    } else if (fn == "mmlu_pro") {
      EXPECT_EQ(mmlu_pro_doc_to_text(doc), out["text"].get<std::string>());
      EXPECT_EQ(mmlu_pro_doc_to_choice(doc), out["choice"]);
    } else if (fn == "musr") {
      EXPECT_EQ(musr_doc_to_text(doc), out["text"].get<std::string>());
      EXPECT_EQ(musr_doc_to_choice(doc), out["choice"]);
    } else if (fn == "truthfulqa_gen") {
      // sacrebleu / rouge-score values: compared to 1e-12 relative (exp/log of the C library).
      Json got = truthfulqa_gen_process_results(doc["doc"], doc["completion"].get<std::string>());
      ASSERT_EQ(got.size(), out.size());
      for (auto it = out.begin(); it != out.end(); ++it) {
        double w = it.value().get<double>(), g = got.at(it.key()).get<double>();
        EXPECT_NEAR(g, w, 1e-12 * std::max(1.0, std::fabs(w))) << it.key() << " " << doc.dump();
      }
    } else if (fn == "truthfulqa_gen_docs") {
      EXPECT_EQ(truthfulqa_gen_process_doc(doc), out);
    } else {
      ADD_FAILURE() << "unknown case kind " << fn;
    }
  }
  EXPECT_GE(counts["wsc"], 100);
  EXPECT_GE(counts["truthfulqa_mc2"], 50);
  EXPECT_GE(counts["truthfulqa_mc2_exact"], 45);
  EXPECT_GE(counts["gpqa_seed0_sequence"], 30);
  EXPECT_GE(counts["truthfulqa_gen"], 40);
}

TEST(TaskFunctions, NumpySumIsPairwise) {
  // np.sum([(i * 0.1 + 4 * 0.013) ** 3 for i in 1..20]) with numpy 2.4.6 (sequential summation
  // would give 48.750364160000004).
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(std::pow(i * 0.1 + 4 * 0.013, 3));
  EXPECT_EQ(numpy_sum(v), 48.75036416000001);
  EXPECT_EQ(numpy_sum({}), 0.0);
  EXPECT_EQ(numpy_sum({2.5}), 2.5);
}

TEST(TaskFunctions, PyCapitalize) {
  EXPECT_EQ(py_capitalize("hELLO wORLD"), "Hello world");
  EXPECT_EQ(py_capitalize(""), "");
  EXPECT_EQ(py_capitalize("éCOLE"), "École");
}

TEST(TaskFunctions, WinograndeBadDocsAreUserErrors) {
  Json d = {{"sentence", "no blank"}, {"option1", "a"}, {"option2", "b"}, {"answer", "3"}};
  EXPECT_THROW(winogrande_doc_to_text(d), lmeval::UserError);
  EXPECT_THROW(winogrande_doc_to_choice(d), lmeval::UserError);
  EXPECT_THROW(logiqa_doc_to_target(Json{{"label", "e"}}), lmeval::UserError);
}

TEST(MathHard, BoxedExtraction) {
  EXPECT_EQ(math_last_boxed_only_string("so $\\boxed{\\frac{1}{2}}$ and"), "\\boxed{\\frac{1}{2}}");
  EXPECT_EQ(math_last_boxed_only_string("a \\boxed{1} b \\boxed{2}"), "\\boxed{2}");
  EXPECT_EQ(math_last_boxed_only_string("x \\boxed 5$ y"), "\\boxed 5");
  EXPECT_EQ(math_last_boxed_only_string("\\fbox{7}"), "\\fbox{7}");
  EXPECT_EQ(math_last_boxed_only_string("none"), kMathInvalidAnswer);
  EXPECT_EQ(math_last_boxed_only_string("\\boxed{1"), kMathInvalidAnswer);
  EXPECT_EQ(math_remove_boxed("\\boxed{[2,5)}"), "[2,5)");
  EXPECT_EQ(math_remove_boxed("\\boxed 5"), "5");
  EXPECT_EQ(math_remove_boxed("\\fbox{7}"), kMathInvalidAnswer);
}

TEST(MathHard, MinervaNormalisation) {
  EXPECT_EQ(
      math_get_unnormalized_answer("Final Answer: The final answer is $24$. I hope it is correct."),
      "$24$");
  EXPECT_EQ(math_get_unnormalized_answer("no answer"), kMathInvalidAnswer);
  EXPECT_EQ(math_normalize_final_answer("$24$"), "24");
  EXPECT_EQ(math_normalize_final_answer("x = 10,000"), "10000");
  EXPECT_EQ(math_normalize_final_answer("\\text{5 inches}"), "5");
  EXPECT_EQ(math_normalize_final_answer("\\frac12"), "\\frac{1}{2}");
  EXPECT_EQ(math_normalize_final_answer("\\sqrt2"), "\\sqrt{2}");
  EXPECT_EQ(math_normalize_final_answer("90^\\circ"), "90");
  EXPECT_EQ(math_normalize_final_answer("\\boxed{-\\frac{2}{3}}"), "-\\frac{2}{3}");
}

TEST(MathHard, Equivalence) {
  EXPECT_TRUE(math_is_equiv("\\frac{1}{2}", "0.5"));
  EXPECT_TRUE(math_is_equiv("\\dfrac{6}{4}", "\\frac{3}{2}"));
  // sympy's parse_latex (the reference's is_equiv) raises LaTeXParsingError on tuples and
  // intervals, so they are equivalent only as equal strings (checked with sympy 1.14 and
  // antlr4-python3-runtime 4.11: is_equiv("(1,0.5)", "(1,\\frac{1}{2})") is False).
  EXPECT_FALSE(math_is_equiv("(1,\\frac{1}{2})", "(1,0.5)"));
  EXPECT_TRUE(math_is_equiv("(1,2)", "(1,2)"));
  EXPECT_FALSE(math_is_equiv("(1,2)", "[1,2]"));
  EXPECT_FALSE(math_is_equiv("x+1", "1+y"));
  EXPECT_FALSE(math_is_equiv("3", "4"));
}

TEST(MathHard, ProcessDocsAndScores) {
  std::vector<Json> docs = {
      {{"problem", "p1"},
       {"level", "Level 5"},
       {"type", "Algebra"},
       {"solution", "So $x=\\boxed{\\frac{3}{2}}$."}},
      {{"problem", "p2"}, {"level", "Level 4"}, {"type", "Algebra"}, {"solution", "\\boxed{1}"}}};
  auto out = math_process_docs(docs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["answer"], "\\frac{3}{2}");
  EXPECT_FALSE(out[0].contains("few_shot"));
  EXPECT_EQ(math_exact_match_original(
                out[0], " Final Answer: The final answer is $\\frac32$. I hope it is correct."),
            1);
  EXPECT_EQ(math_exact_match_original(out[0], " The answer is 1.5"), 0);  // no Minerva phrase
  EXPECT_EQ(math_exact_match(out[0], " The answer is $1.5$."), 1);
  EXPECT_EQ(math_exact_match(out[0], " so \\boxed{2}"), 0);
  // Every gold answer matches itself in the forms the solution writes it.
  EXPECT_EQ(math_exact_match(out[0], out[0]["solution"].get<std::string>()), 1);
  auto shots = math_fewshot_samples();
  ASSERT_EQ(shots.size(), 4u);
  for (const auto& s : shots) {
    Json d = s;
    d["answer"] = math_remove_boxed(math_last_boxed_only_string(s["solution"].get<std::string>()));
    EXPECT_EQ(math_exact_match(d, s["solution"].get<std::string>()), 1) << s.dump();
    EXPECT_EQ(math_exact_match_original(d, s["solution"].get<std::string>()), 1) << s.dump();
  }
}

TEST(TaskFunctionRegistry, ReferenceNamesAreRegistered) {
  lmeval::register_builtin_task_functions();
  auto& r = lmeval::FunctionRegistry::instance();
  for (auto [family, name] : std::vector<std::pair<std::string, std::string>>{
           {"hellaswag", "utils.process_docs"},
           {"winogrande", "preprocess_winogrande.doc_to_text"},
           {"winogrande", "preprocess_winogrande.doc_to_target"},
           {"winogrande", "preprocess_winogrande.doc_to_choice"},
           {"wsc", "preprocess_wsc.default_doc_to_text"},
           {"logiqa", "utils_logiqa.doc_to_text"},
           {"logiqa", "utils_logiqa.doc_to_target"},
           {"truthfulqa", "utils.process_results_mc2"},
           {"truthfulqa", "utils.process_docs_gen"},
           {"truthfulqa", "utils.process_results_gen"},
           {"wikitext", "preprocess_wikitext.wikitext_detokenizer"},
           {"wikitext", "preprocess_wikitext.process_results"},
           {"gpqa", "utils.process_docs"},
           {"mmlu_pro", "utils.doc_to_text"},
           {"mmlu_pro", "utils.doc_to_choice"},
           {"musr", "utils.doc_to_text"},
           {"math", "utils.process_docs"},
           {"math", "utils.doc_to_text"},
           {"math", "utils.process_results"},
           {"math", "utils.list_fewshot_samples"},
           {"ifeval", "utils.process_results"},
           {"ifeval", "utils.agg_inst_level_acc"}}) {
    EXPECT_NE(r.find(family, name), nullptr) << family << ":" << name;
  }
  const auto* wr = r.find("wikitext", "preprocess_wikitext.process_results");
  ASSERT_NE(wr, nullptr);
  Json res = wr->process_results(Json{{"page", "a b  c"}}, {Json(-3.5)});
  EXPECT_EQ(res["word_perplexity"], Json::array({-3.5, 3}));
  EXPECT_EQ(res["bits_per_byte"], Json::array({-3.5, 6}));
}

}  // namespace

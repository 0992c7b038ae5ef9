// The ports of the reference's humaneval/utils.py and mbpp/utils.py and the code_eval runner
// under them, against the reference's own functions and evaluate's code_eval
// (tests/tasks/functions/code_eval_goldens.json, scripts/gen_code_eval_goldens.py), plus the
// limits lm-eval adds: the refusal without --confirm_run_unsafe_code, the memory limit (the
// sandbox: code_sandbox_test.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/code_eval.hpp"
#include "support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using lmeval::Json;
using lmeval::testing::source_dir;

const Json& goldens() {
  static const Json g = Json::parse(lmeval::testing::read_file(
      source_dir() / "tests" / "tasks" / "functions" / "code_eval_goldens.json"));
  return g;
}

// Model code may run in this test binary's runs (set back on leaving).
struct Confirmed {
  bool before = lmeval::code_eval::unsafe_code_confirmed();
  explicit Confirmed(bool on = true) { lmeval::code_eval::set_unsafe_code_confirmed(on); }
  ~Confirmed() { lmeval::code_eval::set_unsafe_code_confirmed(before); }
  Confirmed(const Confirmed&) = delete;
  Confirmed& operator=(const Confirmed&) = delete;
};

const lmeval::TaskFunction& task_fn(const std::string& family, const std::string& name) {
  lmeval::register_builtin_task_functions();
  const auto* fn = lmeval::FunctionRegistry::instance().find(family, name);
  if (!fn) throw std::runtime_error(family + ":" + name + " is not registered");
  return *fn;
}

std::vector<Json> run_filter(const std::string& family, const std::string& name, const Json& resps,
                             const Json& docs) {
  lmeval::register_builtin_task_functions();
  const auto* fn = lmeval::FilterRegistry::instance().find_function(name, family);
  if (!fn) throw std::runtime_error(family + "/" + name + " is not registered");
  std::vector<const Json*> doc_ptrs;
  for (const Json& d : docs) doc_ptrs.push_back(&d);
  return (*fn)(std::vector<Json>(resps.begin(), resps.end()), doc_ptrs);
}

// A golden value ("nan" stands for NaN) equals ours exactly.
void expect_same(const Json& ours, const Json& expected, const std::string& what) {
  if (expected.is_object()) {
    ASSERT_TRUE(ours.is_object()) << what << ": " << ours.dump();
    EXPECT_EQ(ours.size(), expected.size()) << what << ": " << ours.dump();
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      ASSERT_TRUE(ours.contains(it.key())) << what << ": " << it.key() << " in " << ours.dump();
      expect_same(ours[it.key()], it.value(), what + " " + it.key());
    }
  } else if (expected == "nan") {
    EXPECT_TRUE(ours.is_number() && std::isnan(ours.get<double>())) << what << ": " << ours;
  } else {
    EXPECT_EQ(ours.get<double>(), expected.get<double>()) << what;
  }
}

TEST(CodeEval, EstimatorIsCodeEvalsToTheBit) {
  size_t n = 0;
  for (const Json& row : goldens()["estimate_pass_at_k"]) {
    EXPECT_EQ(lmeval::code_eval::estimate_pass_at_k(row[0], row[1], row[2]), row[3].get<double>())
        << row.dump();
    ++n;
  }
  EXPECT_GT(n, 1000u);
}

TEST(HumanEval, CreateTestFiltersMatchTheReference) {
  const Json& g = goldens()["humaneval_build_predictions"];
  for (const char* fn : {"build_predictions", "build_predictions_instruct"}) {
    const auto out = run_filter("humaneval", std::string("utils.") + fn, g["resps"], g["docs"]);
    EXPECT_EQ(Json(out), g[fn]) << fn;
  }
}

TEST(HumanEval, PassAtKMatchesCodeEval) {
  Confirmed confirmed;
  const auto& fn = task_fn("humaneval", "utils.pass_at_k");
  ASSERT_TRUE(fn.metric);
  EXPECT_EQ(fn.name, "pass_at_k");
  size_t passed = 0;
  for (const Json& c : goldens()["humaneval_pass_at_k"]) {
    const Json ours = fn.metric(c["gold"], c["result"], Json{{"k", c["k"]}}, false);
    expect_same(ours, c["pass_at_k"], c["name"].get<std::string>());
    passed += c["pass_at_k"].contains("pass@1") && c["pass_at_k"]["pass@1"] == 1.0;
  }
  EXPECT_GE(passed, 5u);  // passing programs are among the cases, not only failing ones
}

TEST(Mbpp, PassAtOneExtractionAndSamplesMatchTheReference) {
  Confirmed confirmed;
  const auto& pass_at_1 = task_fn("mbpp", "utils.pass_at_1");
  EXPECT_EQ(pass_at_1.name, "pass_at_1");
  for (const Json& c : goldens()["mbpp_pass_at_1"])
    expect_same(pass_at_1.metric(c["gold"], c["result"], Json::object(), false), c["pass_at_1"],
                c["result"].dump());
  const Json& b = goldens()["mbpp_build_predictions"];
  EXPECT_EQ(Json(run_filter("mbpp", "utils.build_predictions", b["resps"], Json::array())),
            b["out"]);
  EXPECT_EQ(task_fn("mbpp", "utils.list_fewshot_samples").doc_fn(Json::object()),
            goldens()["mbpp_list_fewshot_samples"]);
}

TEST(CodeEval, RefusedWithoutConfirmRunUnsafeCode) {
  Confirmed not_confirmed(false);
  const auto& fn = task_fn("humaneval", "utils.pass_at_k");
  try {
    fn.metric("def check(f):\n    pass\n", Json::array({"x = 1"}), Json{{"k", 1}}, false);
    FAIL() << "ran model code without --confirm_run_unsafe_code";
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--confirm_run_unsafe_code"), std::string::npos)
        << e.what();
  }
}

// The sandbox and its limits: code_sandbox_test.cpp.

TEST(CodeEval, MemoryIsLimited) {
  Confirmed confirmed;
  // 6 GiB is over the 4 GiB address-space limit: MemoryError, a failure (code_eval sets no
  // limit, docs/fidelity.md); 100 MiB is well under it.
  auto big = lmeval::code_eval::run_program("x = bytearray(6 * 1024 ** 3)\n");
  EXPECT_FALSE(big.passed);
  EXPECT_EQ(big.result, "failed: ") << big.result;  // str(MemoryError()) is empty
  EXPECT_TRUE(lmeval::code_eval::run_program("x = bytearray(100 * 1024 ** 2)\n").passed);
}

}  // namespace

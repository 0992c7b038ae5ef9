// The C++ ports of the reference's task helper modules, called through the function registry as
// a task calls them, against the reference's own Python run on the same arguments
// (tests/tasks/functions/ported_modules/<family>.jsonl, scripts/gen_ported_module_goldens.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "support/test_support.hpp"

namespace {

using lmeval::Json;

std::vector<Json> golden(const std::string& family) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "functions" /
                   "ported_modules" / (family + ".jsonl"));
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

// Equality that also tells int from float from bool (the samples show the difference).
bool same(const Json& a, const Json& b) {
  if (b == "nan" && a.is_number_float()) return std::isnan(a.get<double>());  // the golden NaN
  if (a.is_number_integer() && b.is_number_integer()) return a.get<int64_t>() == b.get<int64_t>();
  if (a.is_number_float() && b.is_number_float()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    auto ia = a.begin();
    auto ib = b.begin();
    for (; ia != a.end(); ++ia, ++ib)  // key order too: it is the logged document's
      if (ia.key() != ib.key() || !same(ia.value(), ib.value())) return false;
    return true;
  }
  return a == b;
}

Json call(const lmeval::TaskFunction& fn, const std::string& kind, const Json& args) {
  if (kind == "doc") return fn.doc_fn(args);
  if (kind == "docs") {
    std::vector<Json> docs(args.begin(), args.end());
    return Json(fn.process_docs(docs));
  }
  if (kind == "results") {
    std::vector<Json> results(args["results"].begin(), args["results"].end());
    return fn.process_results(args["doc"], results);
  }
  if (kind == "metric") return fn.metric(args["gold"], args["result"], Json::object(), false);
  if (kind == "aggregation") {
    double v = fn.aggregation(std::vector<Json>(args.begin(), args.end()));
    return std::isnan(v) ? Json("nan") : Json(v);
  }
  throw std::runtime_error("unknown call kind " + kind);
}

// Every line of the family's golden: the registered port gives the reference's value, or throws
// a UserError where the reference raised.
void check_family(const std::string& family, size_t min_calls) {
  lmeval::register_builtin_task_functions();
  auto cases = golden(family);
  ASSERT_GE(cases.size(), min_calls) << family;
  for (const auto& c : cases) {
    const std::string fam = c["family"], name = c["fn"], kind = c["call"];
    const auto* fn = lmeval::FunctionRegistry::instance().find(fam, name);
    ASSERT_NE(fn, nullptr) << fam << ":" << name;
    std::string where = fam + ":" + name + " " + c["args"].dump().substr(0, 300);
    if (c.contains("error")) {
      EXPECT_THROW(call(*fn, kind, c["args"]), lmeval::UserError) << where;
      continue;
    }
    Json got;
    try {
      got = call(*fn, kind, c["args"]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": threw " << e.what();
      continue;
    }
    EXPECT_TRUE(same(got, c["out"])) << where << "\n got  " << got.dump().substr(0, 600)
                                     << "\n want " << c["out"].dump().substr(0, 600);
  }
}

TEST(PortedModules, SuperGlueMatchesReference) { check_family("super_glue", 600); }
TEST(PortedModules, GlueMnliMatchesReference) { check_family("glue_mnli", 15); }
TEST(PortedModules, RaceMatchesReference) { check_family("race", 70); }
TEST(PortedModules, XcopaMatchesReference) { check_family("xcopa", 120); }
TEST(PortedModules, XwinogradMatchesReference) { check_family("xwinograd", 35); }
TEST(PortedModules, XquadMatchesReference) { check_family("xquad", 110); }
TEST(PortedModules, NorquadMatchesReference) { check_family("norquad", 130); }
TEST(PortedModules, CoqaMatchesReference) { check_family("coqa", 220); }
TEST(PortedModules, CatalanBenchMatchesReference) { check_family("catalan_bench", 270); }
TEST(PortedModules, SpanishBenchMatchesReference) { check_family("spanish_bench", 30); }
TEST(PortedModules, GalicianBenchMatchesReference) { check_family("galician_bench", 105); }

}  // namespace

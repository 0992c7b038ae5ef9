// C++ ports of the reference's helper modules (mmlu_pro, gpqa, global_mmlu, openai-mmmlu,
// llama3), bound by the module's sha256, against the reference's own Python on real and crafted
// rows (tests/tasks/mc_library_ports_golden.json, scripts/gen_mc_library_port_goldens.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "lmeval/core/py_random.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/function_source.hpp"
#include "lmeval/tasks/functions/gpqa.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "support/test_support.hpp"

namespace {

using lmeval::Json;

const Json& golden() {
  static const Json g = [] {
    std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" /
                     "mc_library_ports_golden.json");
    return Json::parse(in);
  }();
  return g;
}

// The port family the reference module's hash is registered under ("" when none).
std::string family_of(const std::string& module) {
  const std::string sha = golden()["modules"][module]["sha256"];
  for (const auto& s : lmeval::reference_function_sources())
    if (s.sha256 == sha) return s.family;
  return "";
}

const lmeval::TaskFunction* port(const std::string& module, const std::string& fn) {
  lmeval::register_builtin_task_functions();
  return lmeval::FunctionRegistry::instance().find(family_of(module), "utils." + fn);
}

TEST(McLibraryPorts, EveryFunctionOfTheModulesIsRegisteredUnderTheirHash) {
  size_t n = 0;
  for (const auto& [module, info] : golden()["modules"].items()) {
    ASSERT_NE(family_of(module), "") << module << " is not in scripts/gen_function_sources.py";
    for (const auto& fn : info["functions"]) {
      // A bare process_docs(dataset, subject) is the partials' body, named by no YAML.
      if (fn == "process_docs" && module.find("gpqa") == std::string::npos &&
          module.find("arc_challenge") == std::string::npos)
        continue;
      EXPECT_NE(port(module, fn), nullptr) << module << ": " << fn;
      ++n;
    }
  }
  EXPECT_GE(n, 555u);
}

TEST(McLibraryPorts, FiltersKeepTheRowsTheReferenceKeeps) {
  std::vector<Json> rows;
  for (const auto& r : golden()["filter_rows"]) rows.push_back(r);
  size_t n = 0;
  for (const auto& c : golden()["cases"]) {
    if (c["kind"] != "filter") continue;
    const auto* fn = port(c["module"], c["fn"]);
    ASSERT_TRUE(fn && fn->process_docs) << c["module"] << ": " << c["fn"];
    Json kept = Json::array();
    for (const auto& r : fn->process_docs(rows)) kept.push_back(r["i"]);
    EXPECT_EQ(kept, c["out"]) << c["module"] << ": " << c["fn"];
    ++n;
  }
  EXPECT_EQ(n, 547u);  // 14 + 6 + 57 + 57 + 7 * 57 + 14
}

TEST(McLibraryPorts, DocFunctionsMatchTheReference) {
  size_t n = 0;
  for (const auto& c : golden()["cases"]) {
    if (c["kind"] != "doc") continue;
    for (const auto& o : c["outs"]) {
      const auto* fn = port(o["module"], o["fn"]);
      ASSERT_TRUE(fn && fn->doc_fn) << o["module"] << ": " << o["fn"];
      EXPECT_EQ(fn->doc_fn(c["input"]), o["out"]) << o["module"] << ": " << o["fn"];
      ++n;
    }
  }
  EXPECT_GE(n, 40u);
}

TEST(McLibraryPorts, ProcessDocsMatchTheReference) {
  // gpqa n_shot's module generator as the reference's freshly imported module has it.
  lmeval::tasks::gpqa_n_shot_reset_module_rng();
  std::map<std::string, size_t> counts;
  for (const auto& c : golden()["cases"]) {
    if (c["kind"] != "process_docs") continue;
    const std::string module = c["module"];
    const auto* fn = port(module, c["fn"]);
    ASSERT_TRUE(fn && fn->process_docs) << module;
    if (c.contains("seed"))
      lmeval::set_global_random(std::make_shared<lmeval::PyRandom>(c["seed"]));
    std::vector<Json> rows;
    for (const auto& r : c["input"]) rows.push_back(r);
    Json got = Json::array();
    for (auto& r : fn->process_docs(rows)) got.push_back(std::move(r));
    EXPECT_EQ(got, c["out"]) << module << " " << c.value("seed", -1) << " " << c.value("call", -1);
    ++counts[module];
  }
  EXPECT_EQ(counts["gpqa/n_shot/utils.py"], 3u);
  EXPECT_EQ(counts["gpqa/zeroshot/utils.py"], 2u);
  EXPECT_EQ(counts["gpqa/cot_n_shot/utils.py"], 2u);
  EXPECT_EQ(counts["llama3/instruct/arc_challenge/utils.py"], 1u);
}

TEST(McLibraryPorts, BadDocumentsAreUserErrors) {
  const auto* text = port("mmlu_pro/utils.py", "doc_to_text");
  ASSERT_TRUE(text);
  EXPECT_THROW(text->doc_fn(Json{{"question", "q"}}), lmeval::UserError);
  EXPECT_THROW(text->doc_fn(Json{{"question", "q"}, {"options", {1}}}), lmeval::UserError);
  const auto* filter = port("global_mmlu/full/am/utils.py", "process_anatomy");
  ASSERT_TRUE(filter);
  EXPECT_THROW(filter->process_docs({Json{{"question", "q"}}}), lmeval::UserError);
  const auto* arc = port("llama3/instruct/arc_challenge/utils.py", "process_docs");
  ASSERT_TRUE(arc);
  Json doc = {{"choices", {{"text", {"a", "b", "c", "d"}}, {"label", {"1", "2", "3", "4"}}}},
              {"answerKey", "5"}};
  EXPECT_THROW(arc->process_docs({doc}), lmeval::UserError);  // label[4]: IndexError
  doc["answerKey"] = "x";
  EXPECT_THROW(arc->process_docs({doc}), lmeval::UserError);  // int("x"): ValueError
}

}  // namespace

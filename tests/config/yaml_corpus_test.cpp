// The tricky-case corpus (tests/config/yaml_corpus) read by lm-eval equals PyYAML's reading of it
// as the reference loads task YAMLs (goldens from scripts/gen_yaml_goldens.py); where PyYAML fails
// or yields what JSON cannot hold (dates, bytes, int keys, recursion), lm-eval must fail too.
#include <gtest/gtest.h>

#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/python_format.hpp"
#include "support/test_support.hpp"

using lmeval::Json;

namespace {

// The golden's canonical form of one of our values (see canonical() in the script).
Json canonical(const Json& v) {
  if (lmeval::is_function_ref(v)) return Json{{"function", lmeval::function_ref_name(v)}};
  if (v.is_object()) {
    Json pairs = Json::array();
    for (auto it = v.begin(); it != v.end(); ++it)
      pairs.push_back(Json::array({it.key(), canonical(it.value())}));
    return Json{{"map", pairs}};
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const auto& x : v) out.push_back(canonical(x));
    return out;
  }
  if (v.is_number_float()) return Json{{"float", lmeval::py::float_repr(v.get<double>())}};
  if (v.is_number_integer()) return Json{{"int", v.dump()}};
  return v;
}

}  // namespace

TEST(Config_YamlCorpus, EqualsPyYAMLOrFails) {
  auto dir = lmeval::testing::source_dir() / "tests/config/yaml_corpus";
  auto golden = Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                       "tests/config/goldens/yaml_corpus.json"));
  const Json& cases = golden.at("cases");
  ASSERT_GE(cases.size(), 40u);
  size_t values = 0, errors = 0;
  for (auto it = cases.begin(); it != cases.end(); ++it) {
    SCOPED_TRACE(it.key());
    auto path = dir / it.key();
    ASSERT_TRUE(std::filesystem::exists(path));
    if (it.value().contains("value")) {
      ++values;
      try {
        auto y = lmeval::load_yaml(path);
        EXPECT_EQ(canonical(y.value).dump(), it.value()["value"].dump());
      } catch (const lmeval::UserError& e) {
        ADD_FAILURE() << "PyYAML reads it, lm-eval fails: " << e.what();
      }
    } else if (it.value().contains("unrepresentable") &&
               it.value()["unrepresentable"].get<std::string>().find(" of type int") !=
                   std::string::npos) {
      // Scalar keys of other types than str are carried with their type (issue 31;
      // Config_YamlLoader.NonStringKeysKeepTheirPythonType checks their repr and json.dumps).
      EXPECT_NO_THROW(lmeval::load_yaml(path));
    } else {
      ++errors;
      EXPECT_THROW(lmeval::load_yaml(path), lmeval::UserError) << it.value().dump();
    }
  }
  EXPECT_GE(values, 15u);
  EXPECT_GE(errors, 20u);
}

// The bbh prompt that yaml-cpp read with one newline (issue 15).
TEST(Config_YamlCorpus, QuotedScalarKeepsBlankLinesAsNewlines) {
  auto y = lmeval::parse_yaml("description: 'Infer the date from context.\n\n\n  '\n", "b.yaml");
  EXPECT_EQ(y.value["description"], "Infer the date from context.\n\n");
}

TEST(Config_YamlCorpus, ErrorsNameFileLineAndColumn) {
  try {
    lmeval::parse_yaml("a: 1\nb: \"bad \\q escape\"\n", "dir/t.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().file, "dir/t.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find("unknown escape"), std::string::npos) << e.what();
  }
  try {
    lmeval::parse_yaml("x: 1\ndate: 2024-01-01\n", "t.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 7);
  }
}

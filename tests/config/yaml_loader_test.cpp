// YAML loading against PyYAML (goldens from scripts/gen_config_goldens.py) and error locations.
#include "lmeval/config/yaml_loader.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"

using lmeval::Json;

TEST(Config_YamlLoader, ScalarsResolveAsPyYAML) {
  auto golden = Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                       "tests/config/goldens/yaml_scalars.json"));
  ASSERT_GT(golden.size(), 20u);
  for (const auto& c : golden) {
    std::string text = c["text"];
    std::string type = c["type"];
    SCOPED_TRACE("scalar '" + text + "' (PyYAML: " + type + ")");
    if (type != "bool" && type != "int" && type != "float" && type != "NoneType" && type != "str") {
      // PyYAML yields what JSON cannot hold (a date): lm-eval must refuse, not differ.
      EXPECT_THROW(lmeval::parse_yaml("k: " + text + "\n", "t.yaml"), lmeval::UserError);
      continue;
    }
    auto y = lmeval::parse_yaml("k: " + text + "\n", "t.yaml");
    const Json& v = y.value["k"];
    if (type == "bool") {
      ASSERT_TRUE(v.is_boolean());
      EXPECT_EQ(v, c["value"]);
    } else if (type == "int") {
      ASSERT_TRUE(v.is_number_integer());
      EXPECT_EQ(v.get<int64_t>(), c["value"].get<int64_t>());
    } else if (type == "float") {
      ASSERT_TRUE(v.is_number_float());
      if (c["value"].is_object()) {
        std::string r = c["value"]["float"];
        if (r == "nan")
          EXPECT_TRUE(std::isnan(v.get<double>()));
        else
          EXPECT_EQ(v.get<double>(), r[0] == '-' ? -INFINITY : INFINITY);
      } else {
        EXPECT_EQ(v.get<double>(), c["value"].get<double>());
      }
    } else if (type == "NoneType") {
      EXPECT_TRUE(v.is_null());
    } else if (type == "str") {
      ASSERT_TRUE(v.is_string());
      EXPECT_EQ(v, c["value"]);
    }
  }
}

TEST(Config_YamlLoader, QuotedScalarsStayStrings) {
  auto y = lmeval::parse_yaml("a: 'yes'\nb: \"1\"\nc: yes\n", "t.yaml");
  EXPECT_EQ(y.value["a"], "yes");
  EXPECT_EQ(y.value["b"], "1");
  EXPECT_EQ(y.value["c"], true);
}

TEST(Config_YamlLoader, FunctionTagKeepsNameFolderAndLine) {
  auto y = lmeval::parse_yaml("task: x\nprocess_docs: !function utils.process_docs\n",
                              "tasks/hellaswag/h.yaml");
  ASSERT_TRUE(lmeval::is_function_ref(y.value["process_docs"]));
  EXPECT_EQ(lmeval::function_ref_name(y.value["process_docs"]), "utils.process_docs");
  EXPECT_EQ(y.value["process_docs"]["dir"], "hellaswag");
  EXPECT_EQ(y.value["process_docs"]["line"], 2);
}

TEST(Config_YamlLoader, SyntaxErrorNamesFileAndLine) {
  try {
    lmeval::parse_yaml("task: x\nmetric_list:\n  - metric: acc\n   bad: [\n", "tasks/bad.yaml");
    FAIL() << "expected an error";
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().file, "tasks/bad.yaml");
    EXPECT_GE(e.where().line, 3);
    EXPECT_NE(std::string(e.what()).find("invalid YAML"), std::string::npos);
  }
}

TEST(Config_YamlLoader, MarksPointAtValues) {
  auto y = lmeval::parse_yaml("task: x\nmetric_list:\n  - metric: acc\n", "f.yaml");
  auto w = y.where("/metric_list/0/metric");
  EXPECT_EQ(w.line, 3);
  EXPECT_EQ(w.file, "f.yaml");
}

TEST(Config_YamlLoader, DuplicateKeysLastWins) {
  auto y = lmeval::parse_yaml("a: 1\nb: 2\na: 3\n", "f.yaml");
  EXPECT_EQ(y.value["a"], 3);
}

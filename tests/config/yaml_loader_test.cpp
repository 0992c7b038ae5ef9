// YAML loading against PyYAML (goldens from scripts/gen_config_goldens.py) and error locations.
#include "lmeval/config/yaml_loader.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
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

// PyYAML's bool/int/float/None mapping keys are carried with their type: repr() and json.dumps of
// the mapping and its values as PyYAML + CPython give them (scripts/gen_yaml_key_goldens.py).
TEST(Config_YamlLoader, NonStringKeysKeepTheirPythonType) {
  auto g = Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                  "tests/config/goldens/yaml_keys.json"));
  ASSERT_GE(g.size(), 4u);
  for (const auto& c : g) {
    SCOPED_TRACE(c["yaml"].get<std::string>());
    Json m = lmeval::parse_yaml(c["yaml"].get<std::string>(), "t.yaml").value["m"];
    EXPECT_EQ(lmeval::py::repr(m), c["repr"].get<std::string>());
    EXPECT_EQ(lmeval::py::json_dumps(m), c["json"].get<std::string>());
    Json values = Json::array();
    for (const auto& [k, v] : m.items()) values.push_back(v);
    EXPECT_EQ(values, c["values"]);
  }
  // A collection as a key is unhashable in Python: PyYAML fails, and so does the loader.
  try {
    lmeval::parse_yaml("m:\n  ? [1, 2]\n  : x\n", "t.yaml");
    ADD_FAILURE() << "no error";
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:2:5: a mapping key that is a collection"),
              std::string::npos)
        << e.what();
  }
}

// Python text forms against CPython (goldens from scripts/gen_pyformat_goldens.py).
#include "lmeval/core/python_format.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"

using Json = nlohmann::ordered_json;

static Json goldens() {
  return Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                "tests/core/goldens/pyformat.json"));
}

TEST(Core_PythonFormat, FloatRepr) {
  auto g = goldens();
  ASSERT_GT(g["float_repr"].size(), 10u);
  for (const auto& c : g["float_repr"]) {
    if (!c[0].is_number()) continue;  // inf is not valid JSON input
    EXPECT_EQ(lmeval::py::float_repr(c[0].get<double>()), c[1].get<std::string>());
  }
  EXPECT_EQ(lmeval::py::float_repr(1.0 / 0.0), "inf");
}

TEST(Core_PythonFormat, ReprAndStr) {
  auto g = goldens();
  for (const auto& c : g["repr"]) EXPECT_EQ(lmeval::py::repr(c[0]), c[1].get<std::string>());
  for (const auto& c : g["str"]) EXPECT_EQ(lmeval::py::str(c[0]), c[1].get<std::string>());
}

TEST(Core_PythonFormat, JsonDumps) {
  auto g = goldens();
  for (const auto& c : g["json_indent2"])
    EXPECT_EQ(lmeval::py::json_dumps(c[0], {.indent = 2}), c[1].get<std::string>());
  for (const auto& c : g["json_compact"])
    EXPECT_EQ(lmeval::py::json_dumps(c[0]), c[1].get<std::string>());
  for (const auto& c : g["json_ascii"])
    EXPECT_EQ(lmeval::py::json_dumps(c[0], {.ensure_ascii = true}), c[1].get<std::string>());
}

// str() of numpy float64 arrays as numpy prints them (scripts/gen_numpy_str_goldens.py).
TEST(Core_PythonFormat, NumpyArrayStrAsNumpy) {
  auto g = lmeval::Json::parse(lmeval::testing::read_file(
      lmeval::testing::source_dir() / "tests/core/goldens/numpy_array_str.json"));
  ASSERT_GE(g["cases"].size(), 50u);
  for (const auto& c : g["cases"]) {
    std::vector<double> v;
    for (const auto& x : c["values"]) {
      std::string s = x.get<std::string>();
      v.push_back(s == "nan"    ? std::nan("")
                  : s == "inf"  ? INFINITY
                  : s == "-inf" ? -INFINITY
                                : std::strtod(s.c_str(), nullptr));
    }
    EXPECT_EQ(lmeval::py::numpy_array_str(v), c["str"].get<std::string>()) << c["values"].dump();
  }
}

// core/unicode against CPython: str.split() with no argument.
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/core/unicode.hpp"
#include "support/test_support.hpp"

namespace lmeval {
namespace {

TEST(Unicode_PySplit, RunsOfPythonWhitespace) {
  // CPython 3.11: ' \x1c a\u3000b\n\x85c\u200bd  \xa0e'.split() == ['a', 'b', 'c\u200bd', 'e']
  // (\x1c, U+3000, U+0085 and U+00A0 separate; U+200B does not).
  EXPECT_EQ(unicode::py_split(" \x1c a\u3000b\n\u0085c\u200bd  \u00a0e"),
            (std::vector<std::string>{"a", "b", "c\u200bd", "e"}));
  EXPECT_TRUE(unicode::py_split(" \t\n").empty());
  EXPECT_TRUE(unicode::py_split("").empty());
  EXPECT_EQ(unicode::py_split("one"), (std::vector<std::string>{"one"}));
}

}  // namespace
}  // namespace lmeval

// Full case mappings and the final sigma rule; expected values printed by CPython 3.11's
// str.lower()/str.upper() (Unicode 14.0).
TEST(Unicode_PyCase, FullMappingsAndFinalSigmaAsCPython) {
  struct Case {
    const char8_t *in, *lower, *upper;
  };
  const Case cases[] = {
      {u8"\u03a3\u0391\u03a3 \u039f\u0394\u039f\u03a3.",
       u8"\u03c3\u03b1\u03c2 \u03bf\u03b4\u03bf\u03c2.",
       u8"\u03a3\u0391\u03a3 \u039f\u0394\u039f\u03a3."},
      {u8"\ufb01 \u0149 \u01f0", u8"\ufb01 \u0149 \u01f0", u8"FI \u02bcN J\u030c"},
      {u8"\u0130stanbul", u8"i\u0307stanbul", u8"\u0130STANBUL"},
      {u8"\u038c\u03a3\u039f\u03a3", u8"\u03cc\u03c3\u03bf\u03c2", u8"\u038c\u03a3\u039f\u03a3"},
      {u8"\u03a3", u8"\u03c3", u8"\u03a3"},
      {u8"A\u03a3", u8"a\u03c2", u8"A\u03a3"},
      {u8"a\u03a3'b", u8"a\u03c3'b", u8"A\u03a3'B"},
      {u8"a\u03a3'", u8"a\u03c2'", u8"A\u03a3'"},
      {u8"\u00df stra\u00dfe", u8"\u00df stra\u00dfe", u8"SS STRASSE"},
      {u8"\u01c5 \u01c8", u8"\u01c6 \u01c9", u8"\u01c4 \u01c7"},
      {u8"\uab70\uab71", u8"\uab70\uab71", u8"\u13a0\u13a1"},
      {u8"\u10d0 \u10d1", u8"\u10d0 \u10d1", u8"\u1c90 \u1c91"},
      {u8"\u0390 \u03b0", u8"\u0390 \u03b0", u8"\u0399\u0308\u0301 \u03a5\u0308\u0301"},
      {u8"\u00c0\u00c9\u00ce \u00e0\u00e9\u00ee", u8"\u00e0\u00e9\u00ee \u00e0\u00e9\u00ee",
       u8"\u00c0\u00c9\u00ce \u00c0\u00c9\u00ce"},
      {u8"\u03a9 K \u00c5", u8"\u03c9 k \u00e5", u8"\u03a9 K \u00c5"},
      {u8"\u01f0\u030c", u8"\u01f0\u030c", u8"J\u030c\u030c"},
      {u8"\u0345", u8"\u0345", u8"\u0399"},
      {u8"A\u03a3\u0301", u8"a\u03c2\u0301", u8"A\u03a3\u0301"},
      {u8"x\u00ad\u03a3", u8"x\u00ad\u03c2", u8"X\u00ad\u03a3"}};
  auto str = [](const char8_t* s) { return std::string(reinterpret_cast<const char*>(s)); };
  for (const auto& c : cases) {
    EXPECT_EQ(lmeval::unicode::py_lower(str(c.in)), str(c.lower)) << str(c.in);
    EXPECT_EQ(lmeval::unicode::py_upper(str(c.in)), str(c.upper)) << str(c.in);
  }
}

// Python's identifier and \w classes over every non-ASCII code point, against CPython's own
// str.isidentifier()/str.isalnum() (tests/core/goldens/py_identifier_ranges.json,
// scripts/gen_identifier_goldens.py). Jinja's lexer takes names by these classes.
TEST(Unicode_PyIdentifier, ClassesEqualCPythonOverAllCodePoints) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "core" / "goldens" /
                   "py_identifier_ranges.json");
  ASSERT_TRUE(in) << "missing tests/core/goldens/py_identifier_ranges.json";
  lmeval::Json g = lmeval::Json::parse(in);
  auto check = [&](const char* key, bool (*pred)(char32_t)) {
    std::vector<bool> want(0x110000, false);
    for (const auto& r : g[key])
      for (uint32_t c = r[0].get<uint32_t>(); c <= r[1].get<uint32_t>(); ++c) want[c] = true;
    int wrong = 0;
    for (char32_t c = 0x80; c < 0x110000; ++c) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      if (pred(c) != want[c] && ++wrong <= 10)
        ADD_FAILURE() << key << ": U+" << std::hex << static_cast<uint32_t>(c) << " CPython says "
                      << want[c];
    }
    EXPECT_EQ(wrong, 0) << key;
  };
  check("start", lmeval::unicode::py_is_id_start);
  check("continue", lmeval::unicode::py_is_id_continue);
  check("word", lmeval::unicode::py_is_word_char);
  EXPECT_TRUE(lmeval::unicode::py_isidentifier("Avaliaci\u00f3n"));
  EXPECT_TRUE(lmeval::unicode::py_isidentifier("_x1"));
  EXPECT_FALSE(lmeval::unicode::py_isidentifier("1x"));
  EXPECT_FALSE(lmeval::unicode::py_isidentifier(""));
  EXPECT_FALSE(lmeval::unicode::py_isidentifier("a-b"));
}

// core/unicode against CPython: str.split() with no argument.
#include <gtest/gtest.h>

#include "lmeval/core/unicode.hpp"

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

// Flag values read as the reference's argparse types read them: Python's int() syntax, and the
// seed ranges numpy enforces. Expected values: CPython 3.11's int() and numpy 2's
// np.random.seed, run by hand on each input.
#include <gtest/gtest.h>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"

TEST(Config_FlagValues, PythonIntSyntax) {
  EXPECT_EQ(lmeval::python_int(" 1_0 "), "10");
  EXPECT_EQ(lmeval::python_int("+5"), "5");
  EXPECT_EQ(lmeval::python_int(" -12 "), "-12");
  EXPECT_EQ(lmeval::python_int("-0"), "-0");
  for (const char* bad : {"1__0", "_1", "1_", "", " ", "1.5", "abc", "1e3", "+", "-_1", "0x10"})
    EXPECT_EQ(lmeval::python_int(bad), "") << bad;
}

// np.random.seed raises "Seed must be between 0 and 2**32 - 1" for the second seed; the
// others take any integer.
TEST(Config_FlagValues, NumpySeedOutsideItsRangeIsRefused) {
  for (const char* bad : {"-1", "1,-1,1", "1,4294967296,1", "None,-5,None,None"}) {
    try {
      lmeval::parse_seed(bad);
      ADD_FAILURE() << bad;
    } catch (const lmeval::UserError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("--seed"), std::string::npos) << m;
      EXPECT_NE(m.find("numpy seed"), std::string::npos) << m;
      EXPECT_NE(m.find("0 to 4294967295"), std::string::npos) << m;
    }
  }
  EXPECT_NO_THROW(lmeval::parse_seed("-5,0,-5"));
  EXPECT_NO_THROW(lmeval::parse_seed("1,4294967295,1"));
  EXPECT_NO_THROW(lmeval::parse_seed("-7,None,-7,-7"));
  try {
    lmeval::parse_seed("99999999999999999999");
    ADD_FAILURE();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

// Flag values read as the reference's argparse types read them: Python's int() syntax, and the
// seed ranges numpy enforces. Expected values: CPython 3.11's int() and numpy 2's
// np.random.seed, run by hand on each input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/core/error.hpp"

TEST(Config_FlagValues, PythonIntSyntax) {
  EXPECT_EQ(lmeval::python_int(" 1_0 "), "10");
  EXPECT_EQ(lmeval::python_int("+5"), "5");
  EXPECT_EQ(lmeval::python_int(" -12 "), "-12");
  EXPECT_EQ(lmeval::python_int("-0"), "-0");
  for (const char* bad : {"1__0", "_1", "1_", "", " ", "1.5", "abc", "1e3", "+", "-_1", "0x10"})
    EXPECT_EQ(lmeval::python_int(bad), "") << bad;
}

// int() and float() read every Unicode decimal digit (category Nd) as its ASCII digit; other
// numeric characters (superscripts, circled digits) are refused. Expected: CPython 3.11.
TEST(Config_FlagValues, PythonNumbersReadUnicodeDecimalDigits) {
  EXPECT_EQ(lmeval::python_int("\u0663"), "3");            // int('٣') == 3
  EXPECT_EQ(lmeval::python_int("\u0664\u0662"), "42");     // Arabic-Indic 42
  EXPECT_EQ(lmeval::python_int(" \u0661_\u0660 "), "10");  // underscores and spaces too
  EXPECT_EQ(lmeval::python_int("\uff13"), "3");            // fullwidth 3
  EXPECT_EQ(lmeval::python_int("\U0001d7d7"), "9");        // mathematical bold 9
  EXPECT_EQ(std::stoi(lmeval::python_int("\U0001d7d8\U0001d7d9")), 1);  // double-struck 0, 1
  EXPECT_EQ(lmeval::python_int("-\u06f7"), "-7");                       // Extended Arabic-Indic 7
  EXPECT_EQ(lmeval::python_int("\u0967\u0968"), "12");                  // Devanagari 12
  EXPECT_EQ(lmeval::python_int("\u0660"), "0");
  for (const char* bad : {"\u09e9.\u09eb", "\u00b2", "\u2460", "\u0663x"})
    EXPECT_EQ(lmeval::python_int(bad), "") << bad;
  double d = 0;
  ASSERT_TRUE(lmeval::python_float("\u09e9.\u09eb", d));  // float('৩.৫') == 3.5
  EXPECT_EQ(d, 3.5);
  ASSERT_TRUE(lmeval::python_float("\uff13", d));
  EXPECT_EQ(d, 3.0);
  EXPECT_FALSE(lmeval::python_float("\u00b2", d));
  EXPECT_FALSE(lmeval::python_float("\u2460", d));
  // --seed's items go through int() too (_int_or_none_list_arg_type).
  EXPECT_EQ(lmeval::parse_seed("\u0664\u0662").at(0), 42);
  EXPECT_EQ(lmeval::parse_seed(" 1_0 ,None,3").at(0), 10);
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

// --include_path: the value whole when that path exists (as the reference always takes it),
// else its non-empty pieces between ':' (so a folder with ':' in its name can only be given
// alone); check_include_path names the piece that is missing.
TEST(Config_FlagValues, IncludePathList) {
  namespace fs = std::filesystem;
  using V = std::vector<std::string>;
  const fs::path dir = fs::temp_directory_path() / ("lmeval_include_" + std::to_string(getpid()));
  fs::create_directories(dir / "a:b");
  fs::create_directories(dir / "c");
  const std::string d = dir.string() + "/";
  EXPECT_EQ(lmeval::include_path_list(d + "a:b"), V{d + "a:b"});
  EXPECT_EQ(lmeval::include_path_list(d + "c:" + d + "a:b"), (V{d + "c", d + "a", "b"}));
  EXPECT_EQ(lmeval::include_path_list("x::y:"), (V{"x", "y"}));
  EXPECT_EQ(lmeval::include_path_list(":"), V{});
  lmeval::check_include_path(d + "a:b");
  lmeval::check_include_path(d + "c:" + d + "c");
  EXPECT_EQ(lmeval::include_path_list(d + "c:" + d + "c"), (V{d + "c", d + "c"}));
  try {
    lmeval::check_include_path(d + "c:" + d + "nope");
    ADD_FAILURE() << "a missing piece was accepted";
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + d + "nope' does not exist (one of '"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(lmeval::check_include_path(":"), lmeval::UserError);
  fs::remove_all(dir);
}

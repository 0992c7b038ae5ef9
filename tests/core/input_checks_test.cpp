// UTF-8 validity (positions as CPython's bytes.decode('utf-8') reports them), JSON nesting
// limits and batch-size text.
#include <gtest/gtest.h>

#include <string>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"

using namespace lmeval;

TEST(Core_InputChecks, FirstInvalidUtf8MatchesCPython) {
  // Expected start offsets from CPython: `b.decode('utf-8')` -> UnicodeDecodeError.start.
  struct Case {
    std::string bytes;
    long expected;
  };
  const Case cases[] = {{"abc", -1},
                        {"\xff", 0},
                        {"ab\xfe", 2},
                        {"\xc3\xa9ok", -1},
                        {"\xc0\xaf", 0},
                        {"\xe0\x80\x80", 0},
                        {"\xed\xa0\x80", 0},
                        {"\xf4\x90\x80\x80", 0},
                        {"\xf0\x9f\x98\x80", -1},
                        {"x\xe2\x82", 1},
                        {"\xef\xbb\xbfhi", -1},
                        {"a\x80"
                         "b",
                         1},
                        {"\xf8\x88\x80\x80\x80", 0}};
  for (const auto& c : cases) {
    auto got = first_invalid_utf8(c.bytes);
    if (c.expected < 0)
      EXPECT_FALSE(got.has_value()) << c.bytes;
    else {
      ASSERT_TRUE(got.has_value()) << c.bytes;
      EXPECT_EQ(static_cast<long>(*got), c.expected) << c.bytes;
    }
  }
}

TEST(Core_InputChecks, RequireUtf8NamesFileLineAndOffset) {
  try {
    require_utf8("a: 1\nb: \"\xff\xfe\"\n", "t.yaml");
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("t.yaml:2"), std::string::npos) << m;
    EXPECT_NE(m.find("byte offset 9"), std::string::npos) << m;
    EXPECT_NE(m.find("0xff"), std::string::npos) << m;
    EXPECT_NE(m.find("expected UTF-8"), std::string::npos) << m;
  }
}

TEST(Core_InputChecks, JsonNestingLimit) {
  std::string ok(kMaxNestingDepth, '['), deep(kMaxNestingDepth + 1, '[');
  EXPECT_FALSE(json_nesting_exceeds(ok).has_value());
  ASSERT_TRUE(json_nesting_exceeds(deep).has_value());
  EXPECT_EQ(*json_nesting_exceeds(deep), static_cast<size_t>(kMaxNestingDepth));
  // Brackets inside strings (escaped quotes too) do not count.
  std::string in_string = "{\"a\": \"\\\"" + std::string(2000, '[') + "\"}";
  EXPECT_FALSE(json_nesting_exceeds(in_string).has_value());
  try {
    require_json_nesting("{}\n" + std::string(60000, '['), "rows.jsonl", 100, 7);
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("rows.jsonl:8"), std::string::npos) << m;
    EXPECT_NE(m.find("512"), std::string::npos) << m;
  }
}

TEST(Core_InputChecks, BatchSizeText) {
  EXPECT_EQ(check_batch_size("auto", "--batch_size"), 0);
  EXPECT_EQ(check_batch_size("auto:4", "--batch_size"), 4);
  EXPECT_EQ(check_batch_size("16", "--batch_size"), 16);
  EXPECT_EQ(check_batch_size("2147483647", "--batch_size"), 2147483647);
  for (const char* bad :
       {"0", "-3", "99999999999999999999", "2147483648", "auto:0", "eight", "", "auto:"}) {
    try {
      check_batch_size(bad, "--batch_size");
      ADD_FAILURE() << bad << " accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("--batch_size"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("2147483647"), std::string::npos) << e.what();
    }
  }
}

TEST(Core_InputChecks, JsonErrorTextDropsPrefix) {
  EXPECT_EQ(json_error_text("[json.exception.parse_error.101] parse error at line 1"),
            "parse error at line 1");
  EXPECT_EQ(json_error_text("plain"), "plain");
}

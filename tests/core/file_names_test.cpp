// Task names as one file-name component (issue 32): shipped names unchanged, the rest encoded
// the same way every time, never a path, never over the file systems' 255 bytes.
#include <gtest/gtest.h>

#include <string>

#include "lmeval/core/file_names.hpp"

using lmeval::safe_file_component;

TEST(Core_FileNames, OrdinaryTaskNamesAreUnchanged) {
  for (const char* name : {"demo_story_cloze", "mmlu_high_school_physics", "arc_challenge",
                           "leaderboard_bbh_date-understanding", "glue.sst2", "é_ü"})
    EXPECT_EQ(safe_file_component(name), name);
}

TEST(Core_FileNames, PathsAndSeparatorsAreEncoded) {
  EXPECT_EQ(safe_file_component("../escape"), "..%2Fescape");
  EXPECT_EQ(safe_file_component("a/b/c"), "a%2Fb%2Fc");
  EXPECT_EQ(safe_file_component("a\\b"), "a%5Cb");
  // '%' itself, so that "a%2Fb" and "a/b" stay two names.
  EXPECT_EQ(safe_file_component("a%2Fb"), "a%252Fb");
  EXPECT_EQ(safe_file_component(std::string("a\nb\0c", 5)), "a%0Ab%00c");
  EXPECT_EQ(safe_file_component("."), "%2E");
  EXPECT_EQ(safe_file_component(".."), "%2E%2E");
}

TEST(Core_FileNames, LongNamesAreCutWithAHash) {
  const std::string a(300, 'a'), b = std::string(299, 'a') + "b";
  const std::string sa = safe_file_component(a), sb = safe_file_component(b);
  EXPECT_LE(sa.size(), 150u);
  EXPECT_EQ(sa, safe_file_component(a));  // the same every time
  EXPECT_NE(sa, sb);
  EXPECT_EQ(sa.substr(0, 100), a.substr(0, 100));
  // Cut at a character boundary: 'é' is two bytes.
  std::string e;
  for (int i = 0; i < 200; ++i) e += "é";
  const std::string se = safe_file_component(e);
  EXPECT_LE(se.size(), 150u);
  const std::string head = se.substr(0, se.find('-'));
  EXPECT_EQ(head.size() % 2, 0u) << se;
}

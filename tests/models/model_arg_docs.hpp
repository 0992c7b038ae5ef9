// docs/models.md's model_args lists against the backends' tables: the rows between a backend's
// `<!-- model-args:NAME:begin -->` and `<!-- model-args:NAME:end -->` markers must be the rows
// model_args::doc_rows gives for its table.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "lmeval/models/model_arg_table.hpp"
#include "support/test_support.hpp"

namespace lmeval::testing {

inline std::vector<std::string> documented_model_args(const std::string& section) {
  std::istringstream in(read_file(source_dir() / "docs" / "models.md"));
  std::vector<std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<!-- model-args:" + section + ":begin") != std::string::npos)
      inside = true;
    else if (line.find("<!-- model-args:" + section + ":end") != std::string::npos)
      inside = false;
    else if (inside && line.rfind("|", 0) == 0)
      rows.push_back(line);
  }
  return rows;
}

inline void expect_documented(const std::string& section, const std::vector<ModelArgInfo>& infos) {
  const std::vector<std::string> want = model_args::doc_rows(infos);
  const std::vector<std::string> got = documented_model_args(section);
  std::string expected;
  for (const auto& r : want) expected += r + "\n";
  const std::string hint = "docs/models.md's model_args list for " + section + " (between its " +
                           "model-args:" + section + " markers) should read:\n" + expected;
  ASSERT_EQ(got.size(), want.size()) << hint;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << hint;
}

}  // namespace lmeval::testing

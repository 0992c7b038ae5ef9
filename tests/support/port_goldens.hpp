// The goldens of the task-helper port tests: tests/tasks/functions/<name>, one case a line, made
// by the scripts named in each test from the reference's own module functions.
#pragma once

#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace lmeval::testing {

inline std::vector<nlohmann::ordered_json> port_goldens(const std::string& name) {
  return read_jsonl(source_dir() / "tests" / "tasks" / "functions" / name);
}

}  // namespace lmeval::testing

// Helpers shared by the test suites: locating ../shared and the built binary.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace lmeval::testing {

// ../shared beside the checkout (or $LMEVAL_SHARED_DIR); empty path when absent.
std::filesystem::path shared_dir();

// The repository root.
std::filesystem::path source_dir();

// Path of the built lm-eval binary.
std::filesystem::path lmeval_binary();

// Read a whole file.
std::string read_file(const std::filesystem::path& p);
// One JSON value per non-empty line of a .jsonl file.
std::vector<nlohmann::ordered_json> read_jsonl(const std::filesystem::path& p);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Run a shell command line, capturing stdout and stderr.
CommandResult run_command(const std::string& command_line);

// The results file under an --output_path directory, re-dumped without the fields that are
// dates or timings (date, total_evaluation_time_seconds, performance.*.seconds and
// tokens_per_second), for comparing two runs; an explanation when there is none.
std::string results_without_timings(const std::filesystem::path& output_dir);
// The samples file of `task` under an --output_path directory (empty when absent).
std::string samples_of(const std::filesystem::path& output_dir, const std::string& task);

}  // namespace lmeval::testing

// Skips the current test with a clear message when ../shared (or a path inside it) is absent.
#define LMEVAL_REQUIRE_SHARED(rel)                                                           \
  do {                                                                                       \
    if (::lmeval::testing::shared_dir().empty() ||                                           \
        !std::filesystem::exists(::lmeval::testing::shared_dir() / (rel)))                   \
      GTEST_SKIP() << "../shared/" << (rel)                                                  \
                   << " is absent (set LMEVAL_SHARED_DIR to the shared folder to run this)"; \
  } while (0)

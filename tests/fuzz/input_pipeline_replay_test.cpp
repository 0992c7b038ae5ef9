// Replays fuzz/corpus/input_pipeline through the fuzz target's entry point (built here without
// libFuzzer): every seed, and every crash found once, must end in a UserError or no error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "../../fuzz/input_pipeline.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

TEST(Fuzz_InputPipeline, CorpusReplaysWithoutCrashOrUnexpectedError) {
  fs::path dir = lmeval::testing::source_dir() / "fuzz" / "corpus" / "input_pipeline";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    std::string bytes = lmeval::testing::read_file(f);
    EXPECT_NO_THROW(lmeval::fuzz::run_input_pipeline(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                     bytes.size()));
  }
}

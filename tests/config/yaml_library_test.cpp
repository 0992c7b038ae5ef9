// Every YAML file of the reference's task library read by lm-eval equals PyYAML's reading of it
// (scripts/compare_yaml_library.py). Needs a venv with lm-eval==0.4.13: $LMEVAL_REF_VENV, else
// .venv-ref in the source tree; skipped with a message without one (CI has none).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>

#include "support/test_support.hpp"

TEST(Config_YamlLibrary, EveryReferenceTaskYamlEqualsPyYAML) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("LMEVAL_REF_VENV");
  fs::path venv = env && *env ? fs::path(env) : lmeval::testing::source_dir() / ".venv-ref";
  if (!fs::exists(venv / "bin/python"))
    GTEST_SKIP() << "no reference venv at " << venv
                 << " (set LMEVAL_REF_VENV to a venv with lm-eval==0.4.13 to run this test)";
  std::string cmd = (venv / "bin/python").string() + " " +
                    (lmeval::testing::source_dir() / "scripts/compare_yaml_library.py").string() +
                    " --venv " + venv.string() + " --lm-eval " +
                    lmeval::testing::lmeval_binary().string() + " --show 5";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  int rc = WEXITSTATUS(status);
  if (rc == 77) GTEST_SKIP() << "the venv has no lm_eval package";
  EXPECT_EQ(rc, 0) << "some YAML files differ from PyYAML's reading (see the output above)";
}

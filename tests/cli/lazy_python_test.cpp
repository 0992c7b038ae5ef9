// libpython is loaded only for tasks whose `!function`s run in Python: lm-eval does not link it
// (ldd), a run of tasks without Python helpers never maps it (its own /proc/self/maps, read at exit
// by the LD_PRELOAD probe of lazy_torch_test.cpp), and a task with a Python helper maps it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_file;
using lmeval::testing::run_command;
using lmeval::testing::source_dir;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// What lm-eval mapped of libpython and its Python plugin when running `args` in `cwd`.
std::string python_mapped(const std::string& args, const fs::path& cwd, const std::string& env,
                          int expected_exit = 0) {
  const fs::path out =
      fs::temp_directory_path() / ("lmeval_lazy_python_" + std::to_string(::getpid()) + ".txt");
  fs::remove(out);
  auto r = run_command(
      "cd " + quoted(cwd) + " && " + env + " LD_PRELOAD=" + quoted(LMEVAL_MAPS_PROBE) +
      " LMEVAL_MAPS_PROBE_OUT=" + quoted(out) + " " + quoted(lmeval_binary()) + " " + args);
  EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.err;
  std::string maps = fs::exists(out) ? read_file(out) : "";
  fs::remove(out);
  EXPECT_NE(maps.find("maps-probe-ran"), std::string::npos) << "the probe did not run: " << args;
  return maps;
}

}  // namespace

TEST(LazyPython, BinaryDoesNotLinkLibpython) {
  auto r = run_command("ldd " + quoted(lmeval_binary()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libc.so"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libpython"), std::string::npos) << r.out;
}

TEST(LazyPython, TasksWithoutPythonHelpersNeverMapIt) {
  const fs::path cwd = fs::temp_directory_path();
  for (const std::string args : {"ls tasks", "validate --model dummy --tasks demo_story_cloze",
                                 "run --model dummy --tasks demo_story_cloze --limit 4"}) {
    std::string maps = python_mapped(args, cwd, "");
    EXPECT_EQ(maps.find("libpython"), std::string::npos) << args << " mapped libpython:\n" << maps;
    EXPECT_EQ(maps.find("liblmeval_python"), std::string::npos) << args << ":\n" << maps;
  }
}

TEST(LazyPython, NativeHfModelNeverMapsIt) {
  const fs::path bin = lmeval_binary().parent_path();
  if (!fs::exists(bin / "liblmeval_hf_cpu.so") && !fs::exists(bin / "liblmeval_hf_cuda.so"))
    GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  // A model lm-eval runs natively never starts the transformers path's Python, even with
  // trust_remote_code (no auto_map) and keys that need parallelize=True to matter.
  std::string maps =
      python_mapped("run --model hf --device cpu --trust_remote_code --model_args pretrained=" +
                        quoted(source_dir() / "models/stories260K") +
                        ",device_map=auto --tasks demo_story_cloze --limit 2",
                    fs::temp_directory_path(), "");
  EXPECT_EQ(maps.find("libpython"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("liblmeval_python"), std::string::npos) << maps;
}

TEST(LazyPython, TaskWithPythonHelperMapsIt) {
  if (!fs::exists(lmeval_binary().parent_path() / "liblmeval_python.so"))
    GTEST_SKIP() << "lm-eval was built without its Python plugin (LMEVAL_WITH_PYTHON)";
  fs::path venv;
  for (const fs::path& c :
       {fs::path(std::getenv("LMEVAL_TEST_VENV") ? std::getenv("LMEVAL_TEST_VENV") : ""),
        fs::path(std::getenv("VIRTUAL_ENV") ? std::getenv("VIRTUAL_ENV") : ""),
        source_dir() / ".venv-standin", source_dir().parent_path() / "venv-ref"})
    if (!c.empty() &&
        run_command(quoted(c / "bin" / "python3") + " -c 'import datasets' 2>/dev/null")
                .exit_code == 0) {
      venv = c;
      break;
    }
  if (venv.empty()) GTEST_SKIP() << "no Python environment with `datasets` (set LMEVAL_TEST_VENV)";
  const fs::path fixture = source_dir() / "tests" / "fixtures" / "python_tasks";
  std::string maps =
      python_mapped("run --model dummy --tasks py_helpers_mc --include_path tasks --data_dir data",
                    fixture, "VIRTUAL_ENV=" + quoted(venv));
  EXPECT_NE(maps.find("libpython"), std::string::npos) << maps;
  EXPECT_NE(maps.find("liblmeval_python.so"), std::string::npos) << maps;
}

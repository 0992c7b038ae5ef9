// A test's own scratch folder, made fresh and removed with everything in it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace lmeval::testing {

// A fresh, empty folder under the system's temporary directory, named for `prefix`, the process
// and the running test (so parallel ctest processes and tests never share one), removed when the
// object goes. write() creates the parent folders it needs.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string name = prefix + "_" + std::to_string(::getpid());
    if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info())
      name += std::string("_") + info->test_suite_name() + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';  // parameterised tests' names hold '/'
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;  // a destructor must not throw; a folder left behind is harmless
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `text`, byte for byte, to path()/rel.
  void write(const std::filesystem::path& rel, const std::string& text) const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::binary) << text;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace lmeval::testing

// Implementation of the test helpers.
#include "support/test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace lmeval::testing {

std::filesystem::path source_dir() { return LMEVAL_SOURCE_DIR; }

std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("LMEVAL_SHARED_DIR"); env && *env) {
    std::filesystem::path p(env);
    return std::filesystem::exists(p) ? p : std::filesystem::path{};
  }
  auto p = source_dir().parent_path() / "shared";
  return std::filesystem::exists(p) ? p : std::filesystem::path{};
}

std::filesystem::path lmeval_binary() { return LMEVAL_BINARY; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult run_command(const std::string& command_line) {
  CommandResult r;
  char err_path[] = "/tmp/lmeval_test_stderr_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  std::string full = command_line + " 2>" + err_path;
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path);
  std::remove(err_path);
  return r;
}

std::string results_without_timings(const std::filesystem::path& output_dir) {
  if (!std::filesystem::exists(output_dir)) return "no directory " + output_dir.string();
  for (const auto& e : std::filesystem::recursive_directory_iterator(output_dir))
    if (e.path().filename().string().rfind("results_", 0) == 0) {
      auto r = nlohmann::ordered_json::parse(read_file(e.path()));
      r.erase("date");
      r.erase("total_evaluation_time_seconds");
      if (r.contains("performance"))
        for (auto& [type, stats] : r["performance"].items()) {
          stats.erase("seconds");
          stats.erase("tokens_per_second");
        }
      return r.dump(1);
    }
  return "no results file under " + output_dir.string();
}

std::string samples_of(const std::filesystem::path& output_dir, const std::string& task) {
  if (!std::filesystem::exists(output_dir)) return "";
  std::string prefix = "samples_" + task + "_";
  for (const auto& e : std::filesystem::recursive_directory_iterator(output_dir)) {
    std::string name = e.path().filename().string();
    // samples_<task>_<date>.jsonl where the date has no '_' (task names may)
    if (name.rfind(prefix, 0) == 0 && name.find('_', prefix.size()) == std::string::npos)
      return read_file(e.path());
  }
  return "";
}

std::vector<nlohmann::ordered_json> read_jsonl(const std::filesystem::path& p) {
  std::vector<nlohmann::ordered_json> rows;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(nlohmann::ordered_json::parse(line));
  return rows;
}

}  // namespace lmeval::testing

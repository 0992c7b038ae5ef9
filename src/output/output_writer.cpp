// Results/samples files under --output_path (EvaluationTracker's naming).
#include "lmeval/output/output_writer.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <ctime>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "lmeval/core/atomic_file.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/file_names.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval {

namespace fs = std::filesystem;

std::string date_id_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H-%M-%S", &tm);
  std::string s = buf;
  if (micros) {
    char m[16];
    std::snprintf(m, sizeof m, ".%06lld", static_cast<long long>(micros));
    s += m;
  }
  return s;
}

void write_text_file(const fs::path& p, const std::string& content) {
  write_file_atomic(p, content);
}

namespace {

// What a path is when it is no folder or regular file ("" otherwise), for the refusals.
std::string odd_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::symlink:
      return "a symlink";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "";
  }
}

// The closest existing ancestor of `dir` (itself included), refusing a dangling symlink on the
// way: create_directories would fail on it only after the whole run.
fs::path existing_folder_for(const fs::path& dir, const std::string& shown,
                             const SourceLocation& where) {
  std::error_code ec;
  fs::path existing = dir;
  for (;;) {
    const auto st = fs::symlink_status(existing, ec);
    if (fs::exists(st)) {
      if (fs::is_symlink(st) && !fs::exists(existing, ec))
        throw UserError("output path " + shown + ": " + existing.string() +
                            " is a symlink to a missing " + fs::read_symlink(existing, ec).string(),
                        where, "an existing folder, or a path that does not exist yet");
      break;
    }
    if (!existing.has_parent_path() || existing == existing.parent_path()) {
      existing = ".";
      break;
    }
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec))
    throw UserError("output path " + shown + " is under " + existing.string() + ", which is " +
                        (odd_kind(fs::symlink_status(existing, ec)).empty()
                             ? std::string("a file")
                             : odd_kind(fs::symlink_status(existing, ec))),
                    where, "a folder path whose parents are folders");
  return existing;
}

// A probe file in the folder that will receive a new entry: the one test that sees
// permissions, read-only mounts, ACLs and full inode tables alike.
void probe_folder(const fs::path& existing, const std::string& shown, const SourceLocation& where) {
  fs::path probe = existing / (".lm-eval-write-probe-" + std::to_string(::getpid()));
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    throw UserError("output path " + shown + " cannot be written: " + existing.string() + ": " +
                        std::strerror(err),
                    where, "a folder this user can write to");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_path_writable(const std::string& output_path) {
  fs::path op(output_path);
  const SourceLocation where{"", 0, 0, "--output_path"};
  std::error_code ec;
  // A .json path names the results file; its folder takes the files. Any other path is a folder.
  bool json_file = op.extension() == ".json";
  fs::path dir = json_file ? op.parent_path() : op;
  if (dir.empty()) dir = ".";
  if (!json_file && fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    const std::string kind = odd_kind(fs::status(dir, ec));
    throw UserError("output path " + output_path + " is " + (kind.empty() ? "a file" : kind), where,
                    "a folder (or a path ending in .json for the results file)");
  }
  probe_folder(existing_folder_for(dir, output_path, where), output_path, where);
}

void check_output_file(const std::string& path, const std::string& flag) {
  const SourceLocation where{"", 0, 0, flag};
  if (path.empty()) throw UserError(flag + " is empty", where, "a file name");
  const fs::path p(path);
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    const std::string kind = fs::is_directory(st) ? "a folder" : odd_kind(st);
    throw UserError(flag + " " + path + " is " + kind + ", which lm-eval does not replace", where,
                    "a regular file or a new file");
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  probe_folder(existing_folder_for(dir, path, where), path, where);
}

namespace {

// LMEVAL_TEST_WRITE_DELAY_MS=<n>: a pause of n ms after each file is staged and after each rename,
// so tests can kill a run while it writes (tests/cli/stop_signal_test.cpp). Not for users.
void test_write_delay() {
  static const long ms = [] {
    const char* v = std::getenv("LMEVAL_TEST_WRITE_DELAY_MS");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

WrittenFiles write_outputs(const std::string& output_path, const Json& results,
                           const std::vector<std::pair<std::string, std::vector<Json>>>& samples) {
  WrittenFiles w;
  std::string date = date_id_now();
  fs::path op(output_path);
  fs::path dir;
  if (op.extension() == ".json") {
    dir = op.parent_path();
    w.results = dir / (op.stem().string() + "_" + date + ".json");
  } else {
    dir = op / results.value("model_name_sanitized", "model");
    w.results = dir / ("results_" + date + ".json");
  }
  // Everything is staged first; then the samples are renamed into place and the results file
  // last, so a results file means its samples are complete. A failure (disk full) or a stop
  // signal before the renames leaves no file at all (the staged files remove themselves).
  std::vector<AtomicFile> staged;
  for (const auto& [task, lines] : samples) {
    fs::path p = dir / ("samples_" + safe_file_component(task) + "_" + date + ".jsonl");
    staged.emplace_back(p);
    std::string chunk;
    for (const auto& l : lines) {
      chunk += py::json_dumps(l);
      chunk += '\n';
      if (chunk.size() >= (1u << 20)) {
        staged.back().write(chunk);
        chunk.clear();
      }
    }
    staged.back().write(chunk);
    staged.back().finish();
    w.samples.push_back(p);
    test_write_delay();
    throw_if_stopped();
  }
  staged.emplace_back(w.results);
  staged.back().write(py::json_dumps(results, {.indent = 2}));
  staged.back().finish();
  throw_if_stopped();
  for (auto& f : staged) {
    f.commit();
    test_write_delay();
  }
  return w;
}

}  // namespace lmeval

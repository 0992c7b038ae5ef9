// Output files that appear whole or not at all: written to a temporary file in the target's
// folder, flushed to disk (fsync), then renamed over the target.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace lmeval {

// One staged file. write() appends to the temporary file; commit() makes it the target. A file
// destroyed without commit() removes its temporary file, so a failed or interrupted run leaves
// nothing behind. Every failure is a RuntimeError "cannot write <target>: <OS error>".
class AtomicFile {
 public:
  // Creates the target's folder (and its parents) and the temporary file
  // (.<name>.tmp<pid>_<n> beside the target: hidden, and no reader's pattern matches it).
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;

  void write(std::string_view bytes);
  // Flushes and closes the temporary file (fsync: a power cut cannot leave an empty target
  // behind a completed rename). Call before commit(); commit() does it when not done yet.
  void finish();
  // Renames the temporary file over the target and syncs the folder.
  void commit();

  const std::filesystem::path& target() const { return target_; }

 private:
  [[noreturn]] void fail(int err);
  void discard() noexcept;

  std::filesystem::path target_;
  std::filesystem::path tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The whole of `content` to `path` through an AtomicFile.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Creates `dir` and its parents; RuntimeError "cannot create folder <dir>: <OS error>" (naming the
// part that is a file, when one is in the way).
void create_output_folder(const std::filesystem::path& dir);

}  // namespace lmeval

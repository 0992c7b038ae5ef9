// AtomicFile: temporary file + fsync + rename, with every OS error reported against the target.
#include "lmeval/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "lmeval/core/error.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

// The folder a path's file goes into ("." for a bare file name).
fs::path folder_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// The closest existing ancestor of `p` (itself included); empty when none exists.
fs::path existing_ancestor(fs::path p) {
  std::error_code ec;
  while (!p.empty() && !fs::exists(fs::symlink_status(p, ec)) && p != p.parent_path())
    p = p.parent_path();
  return fs::exists(p, ec) ? p : fs::path();
}

}  // namespace

void create_output_folder(const fs::path& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  fs::path blocker = existing_ancestor(dir);
  if (!blocker.empty() && !fs::is_directory(blocker, ec))
    throw RuntimeError("cannot create folder " + dir.string() + ": " + blocker.string() +
                       " is a file, not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError("cannot create folder " + dir.string() + ": " + ec.message());
}

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  create_output_folder(target_.parent_path());
  std::error_code ec;
  if (fs::is_directory(target_, ec)) fail(EISDIR);
  // The rename would replace a symlink, FIFO or device node (/dev/full) with a regular file.
  const auto st = fs::symlink_status(target_, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw RuntimeError("cannot write " + target_.string() +
                       ": it exists and is no regular file (only those are replaced)");
  // Built by appending: `"." + string` trips GCC 12's false -Wrestrict warning in some unity
  // batches.
  std::string name(".");
  name += target_.filename().string();
  name += ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  tmp_ = folder_of(target_) / name;
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(errno);
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : target_(std::move(o.target_)), tmp_(std::move(o.tmp_)), fd_(o.fd_), committed_(o.committed_) {
  o.fd_ = -1;
  o.committed_ = true;  // nothing left for the moved-from object to remove
  o.tmp_.clear();
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
}

void AtomicFile::fail(int err) {
  discard();
  committed_ = true;
  throw RuntimeError("cannot write " + target_.string() + ": " + std::strerror(err));
}

void AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) fail(EBADF);
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;  // a signal handler ran (the stop flag); go on writing
      fail(errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::finish() {
  if (fd_ < 0) return;
  if (::fsync(fd_) != 0 && errno != EINVAL) fail(errno);  // EINVAL: a file system without fsync
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 && errno != EINTR) fail(errno);
}

void AtomicFile::commit() {
  if (committed_) return;
  finish();
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail(errno);
  committed_ = true;
  tmp_.clear();
  // The rename itself reaches the disk with the folder's entry; a failure here loses nothing
  // that a reader could see, so it is not an error.
  int dfd = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

}  // namespace lmeval

// Whole-file reads of users' inputs with type and size checks (see input_file.hpp).
#include "lmeval/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lmeval/core/error.hpp"

namespace lmeval {

namespace {

[[noreturn]] void refuse_input(const std::filesystem::path& path, const std::string& message,
                               const std::string& expected) {
  throw UserError(message, {path.string(), 0, 0, ""}, expected);
}

void check_input_stat(const std::filesystem::path& path, const struct stat& st,
                      const std::string& what, const std::string& expected, uint64_t max_bytes) {
  if (S_ISDIR(st.st_mode)) refuse_input(path, what + " is a folder", expected);
  if (!S_ISREG(st.st_mode))
    refuse_input(path, what + " is " + describe_file_kind(st.st_mode) + ", not a regular file",
                 expected + " (a regular file)");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    refuse_input(path,
                 what + " is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                     std::to_string(max_bytes) + " bytes",
                 expected + " of at most " + std::to_string(max_bytes) + " bytes");
}

}  // namespace

std::string describe_file_kind(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symlink";
  return "not a regular file";
}

void require_regular_input(const std::filesystem::path& path, const std::string& what,
                           const std::string& expected) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // absence is the caller's own message
  check_input_stat(path, st, what, expected, UINT64_MAX);
}

std::string read_input_file(const std::filesystem::path& path, const std::string& what,
                            const std::string& expected, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise block before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) refuse_input(path, what + " does not exist", expected);
    refuse_input(path, "cannot read " + what + ": " + std::strerror(err), expected);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse_input(path, "cannot read " + what, expected);
  check_input_stat(path, st, what, expected, max_bytes);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  // Reads to the size fstat gave; a file that grows meanwhile is read up to the limit.
  while (true) {
    if (got == text.size()) {
      if (text.size() >= max_bytes) break;
      text.resize(std::min<uint64_t>(max_bytes, text.size() + 65536));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      refuse_input(path, "cannot read " + what + ": " + std::strerror(errno), expected);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace lmeval

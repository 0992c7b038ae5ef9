// Read-only mmap of a weights file, with messages that name it.
#include "models/hf/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

MappedFile::MappedFile(const std::filesystem::path& path, const std::string& what) : path_(path) {
  const std::string file = path.string();
  // O_NONBLOCK: a FIFO with no writer would block the open before fstat could refuse it.
  int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw UserError("cannot open " + what, {file, 0, 0, ""}, "a readable file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    throw UserError(what + (dir ? " is a folder" : " is not a regular file"), {file, 0, 0, ""},
                    "a file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {  // mmap refuses empty mappings; an empty file has no bytes to point at
    ::close(fd);
    return;
  }
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw RuntimeError("cannot memory-map " + file);
  data_ = static_cast<const std::byte*>(m);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

void MappedFile::release(const std::byte* p, size_t n) const {
  if (!data_ || n == 0 || p < data_ || p + n > data_ + size_) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t b = (begin + page - 1) / page * page;
  const uintptr_t e = (begin + n) / page * page;
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

}  // namespace lmeval::hf

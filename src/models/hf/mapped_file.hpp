// A read-only memory mapping of one regular file (weights files of the hf backend; no torch here).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace lmeval::hf {

class MappedFile {
 public:
  // Throws UserError naming the file when it is missing, unreadable or not a regular file;
  // `what` says what the file is for ("weights file", "adapter weights").
  MappedFile(const std::filesystem::path& path, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  // Tells the kernel that the whole pages inside [p, p + n) are not needed any more.
  void release(const std::byte* p, size_t n) const;

 private:
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace lmeval::hf

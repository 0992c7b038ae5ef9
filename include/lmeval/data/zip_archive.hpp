// A read-only zip archive held in memory (PyPI's wheels): the central directory's entries and
// their bytes, stored or deflated, each checked against its CRC-32. Zip64 and encrypted entries
// are refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmeval {

struct ZipEntry {
  std::string name;     // as the central directory writes it ('/' separated)
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header_offset = 0;
};

class ZipArchive {
 public:
  // Reads the central directory of `bytes`; `what` names the archive in errors. A malformed or
  // truncated archive is a RuntimeError "<what>: not a readable zip archive: <why> (at byte N)".
  ZipArchive(std::string bytes, std::string what);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry's uncompressed bytes; RuntimeError naming the entry when they cannot be read or
  // their CRC-32 or size differ from the directory's.
  std::string read(const ZipEntry& entry) const;

 private:
  [[noreturn]] void fail(const std::string& why, uint64_t at) const;

  std::string bytes_;
  std::string what_;
  std::vector<ZipEntry> entries_;
};

// Whether a member name is safe to write under a folder: relative, '/' separated, no empty,
// "." or ".." part, no backslash, NUL or drive letter.
bool is_safe_zip_member_name(const std::string& name);

}  // namespace lmeval

// Zip reading after PKWARE's APPNOTE (end of central directory, central directory, local
// headers), every offset and length checked against the archive's size before it is used.
#include "lmeval/data/zip_archive.hpp"

#include <zlib.h>

#include <limits>

#include "lmeval/core/error.hpp"

namespace lmeval {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectorySize = 22;
constexpr size_t kDirectoryEntrySize = 46;
constexpr size_t kLocalHeaderSize = 30;

uint16_t u16(const std::string& b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}
uint32_t u32(const std::string& b, size_t at) {
  return static_cast<uint32_t>(u16(b, at)) | (static_cast<uint32_t>(u16(b, at + 2)) << 16);
}

}  // namespace

bool is_safe_zip_member_name(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\\') != std::string::npos || name.find('\0') != std::string::npos) return false;
  if (name.size() >= 2 && name[1] == ':') return false;
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string part = name.substr(start, slash == std::string::npos ? slash : slash - start);
    // A trailing '/' (a folder entry) leaves one empty last part, which is allowed.
    if (slash == std::string::npos) return part != "." && part != "..";
    if (part.empty() || part == "." || part == "..") return false;
    start = slash + 1;
    if (start == name.size()) return true;
  }
}

void ZipArchive::fail(const std::string& why, uint64_t at) const {
  throw RuntimeError(what_ + ": not a readable zip archive: " + why + " (at byte " +
                     std::to_string(at) + " of " + std::to_string(bytes_.size()) + ")");
}

ZipArchive::ZipArchive(std::string bytes, std::string what)
    : bytes_(std::move(bytes)), what_(std::move(what)) {
  const size_t n = bytes_.size();
  if (n < kEndOfDirectorySize) fail("shorter than an end-of-central-directory record", 0);
  // The record ends the file, followed by a comment of at most 65535 bytes.
  size_t eocd = std::string::npos;
  const size_t lowest = n > kEndOfDirectorySize + 0xFFFF ? n - kEndOfDirectorySize - 0xFFFF : 0;
  for (size_t at = n - kEndOfDirectorySize + 1; at-- > lowest;) {
    if (u32(bytes_, at) == kEndOfDirectory &&
        at + kEndOfDirectorySize + u16(bytes_, at + 20) == n) {
      eocd = at;
      break;
    }
  }
  if (eocd == std::string::npos) fail("no end-of-central-directory record (truncated?)", n);
  const uint16_t count = u16(bytes_, eocd + 10);
  const uint32_t dir_size = u32(bytes_, eocd + 12);
  const uint32_t dir_offset = u32(bytes_, eocd + 16);
  if (count == 0xFFFF || dir_size == 0xFFFFFFFF || dir_offset == 0xFFFFFFFF)
    fail("zip64 archives are not supported", eocd);
  if (u16(bytes_, eocd + 4) != 0 || u16(bytes_, eocd + 6) != 0 || u16(bytes_, eocd + 8) != count)
    fail("multi-disk archives are not supported", eocd);
  if (static_cast<uint64_t>(dir_offset) + dir_size > eocd)
    fail("the central directory lies outside the archive", eocd + 16);
  size_t at = dir_offset;
  const size_t end = static_cast<size_t>(dir_offset) + dir_size;
  entries_.reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    if (at + kDirectoryEntrySize > end)
      fail("central directory entry " + std::to_string(i) + " runs past the directory", at);
    if (u32(bytes_, at) != kDirectoryEntry)
      fail("central directory entry " + std::to_string(i) + " has a bad signature", at);
    ZipEntry e;
    const uint16_t flags = u16(bytes_, at + 8);
    e.method = u16(bytes_, at + 10);
    e.crc32 = u32(bytes_, at + 16);
    e.compressed_size = u32(bytes_, at + 20);
    e.size = u32(bytes_, at + 24);
    const size_t name_len = u16(bytes_, at + 28);
    const size_t extra_len = u16(bytes_, at + 30);
    const size_t comment_len = u16(bytes_, at + 32);
    e.local_header_offset = u32(bytes_, at + 42);
    if (at + kDirectoryEntrySize + name_len + extra_len + comment_len > end)
      fail("central directory entry " + std::to_string(i) + " runs past the directory", at);
    e.name = bytes_.substr(at + kDirectoryEntrySize, name_len);
    if (flags & 0x1) fail("entry '" + e.name + "' is encrypted", at + 8);
    if (e.compressed_size == 0xFFFFFFFF || e.size == 0xFFFFFFFF ||
        e.local_header_offset == 0xFFFFFFFF)
      fail("entry '" + e.name + "' needs zip64, which is not supported", at);
    entries_.push_back(std::move(e));
    at += kDirectoryEntrySize + name_len + extra_len + comment_len;
  }
}

std::string ZipArchive::read(const ZipEntry& e) const {
  const uint64_t at = e.local_header_offset;
  if (at + kLocalHeaderSize > bytes_.size())
    fail("the local header of '" + e.name + "' lies outside the archive", at);
  if (u32(bytes_, at) != kLocalHeader) fail("the local header of '" + e.name + "' is missing", at);
  const uint64_t data = at + kLocalHeaderSize + u16(bytes_, at + 26) + u16(bytes_, at + 28);
  if (data + e.compressed_size > bytes_.size())
    fail("the data of '" + e.name + "' runs past the end (truncated?)", data);
  std::string out;
  if (e.method == 0) {
    if (e.compressed_size != e.size) fail("stored entry '" + e.name + "' changes size", at);
    out = bytes_.substr(data, e.size);
  } else if (e.method == 8) {
    if (e.size > std::numeric_limits<uInt>::max() ||
        e.compressed_size > std::numeric_limits<uInt>::max())
      fail("entry '" + e.name + "' is too large", at);
    out.resize(e.size);
    z_stream zs{};
    // Raw deflate (negative window bits): zip entries carry no zlib header.
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw RuntimeError("zlib: inflateInit2 failed");
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes_.data() + data));
    zs.avail_in = static_cast<uInt>(e.compressed_size);
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&zs, Z_FINISH);
    const uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || produced != e.size)
      fail("entry '" + e.name + "' does not inflate to its " + std::to_string(e.size) +
               " bytes (zlib " + std::to_string(rc) + ")",
           data);
  } else {
    fail("entry '" + e.name + "' uses compression method " + std::to_string(e.method) +
             " (only stored and deflate are supported)",
         at);
  }
  const uint32_t crc = static_cast<uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  if (crc != e.crc32) fail("entry '" + e.name + "' fails its CRC-32 check", data);
  return out;
}

}  // namespace lmeval

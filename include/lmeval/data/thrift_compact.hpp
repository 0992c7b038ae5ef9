// Bounds-checked reader for the Thrift compact protocol (the encoding of parquet metadata).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmeval::thrift {

// Any malformed input: truncated data, bad type codes, nesting too deep, absurd sizes.
class ThriftError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Compact-protocol type codes as they appear in field headers.
enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactReader {
 public:
  CompactReader(const uint8_t* data, size_t size) : p_(data), begin_(data), end_(data + size) {}

  size_t position() const { return static_cast<size_t>(p_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  // Struct framing: field ids are delta-encoded relative to the previous field of the same struct.
  void begin_struct();
  void end_struct();
  // Reads the next field header; false at the STOP marker.
  bool next_field(int16_t& id, CType& type);

  // Values. `type` is the field (or list element) type just read; a mismatch is an error so a
  // corrupt file cannot make us reinterpret bytes.
  bool read_bool(CType type);
  int32_t read_i32(CType type);
  int64_t read_i64(CType type);
  double read_double(CType type);
  std::string read_string(CType type);
  // List/set header: element type and count (count is checked against the bytes left).
  uint32_t read_list_header(CType type, CType& elem_type);
  // Skips one value of the given type (recursively for containers).
  void skip(CType type);

  uint64_t read_varint();
  int64_t read_zigzag() {
    uint64_t v = read_varint();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  uint8_t read_byte() {
    if (p_ >= end_) throw ThriftError("unexpected end of thrift data");
    return *p_++;
  }

 private:
  void expect(CType got, CType want, const char* what);
  void skip_depth(CType type, int depth);

  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  std::vector<int16_t> last_field_;  // one entry per open struct
  bool pending_bool_ = false;        // a bool field's value is carried in its header
  bool pending_bool_value_ = false;
};

}  // namespace lmeval::thrift

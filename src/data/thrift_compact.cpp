// Thrift compact protocol decoding with strict bounds checks (fuzzed: fuzz/parquet_fuzz.cpp).
#include "lmeval/data/thrift_compact.hpp"

#include <cstring>

namespace lmeval::thrift {

namespace {
constexpr int kMaxDepth = 64;
const char* type_name(CType t) {
  switch (t) {
    case CType::kStop:
      return "stop";
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      return "bool";
    case CType::kByte:
      return "byte";
    case CType::kI16:
      return "i16";
    case CType::kI32:
      return "i32";
    case CType::kI64:
      return "i64";
    case CType::kDouble:
      return "double";
    case CType::kBinary:
      return "binary";
    case CType::kList:
      return "list";
    case CType::kSet:
      return "set";
    case CType::kMap:
      return "map";
    case CType::kStruct:
      return "struct";
  }
  return "unknown";
}
bool is_int(CType t) {
  return t == CType::kByte || t == CType::kI16 || t == CType::kI32 || t == CType::kI64;
}
}  // namespace

uint64_t CompactReader::read_varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = read_byte();
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw ThriftError("varint longer than 10 bytes");
}

void CompactReader::begin_struct() {
  if (last_field_.size() >= kMaxDepth) throw ThriftError("thrift structs nested too deeply");
  last_field_.push_back(0);
}

void CompactReader::end_struct() {
  if (!last_field_.empty()) last_field_.pop_back();
}

bool CompactReader::next_field(int16_t& id, CType& type) {
  if (last_field_.empty()) throw ThriftError("field read outside a struct");
  uint8_t b = read_byte();
  uint8_t t = b & 0x0f;
  if (t == 0) return false;
  if (t > 12) throw ThriftError("invalid thrift field type " + std::to_string(t));
  type = static_cast<CType>(t);
  uint8_t delta = b >> 4;
  if (delta != 0) {
    id = static_cast<int16_t>(last_field_.back() + delta);
  } else {
    int64_t v = read_zigzag();
    if (v < -32768 || v > 32767) throw ThriftError("thrift field id out of range");
    id = static_cast<int16_t>(v);
  }
  last_field_.back() = id;
  if (type == CType::kBoolTrue || type == CType::kBoolFalse) {
    pending_bool_ = true;
    pending_bool_value_ = type == CType::kBoolTrue;
  } else {
    pending_bool_ = false;
  }
  return true;
}

void CompactReader::expect(CType got, CType want, const char* what) {
  if (got != want)
    throw ThriftError(std::string("thrift type mismatch: expected ") + what + ", found " +
                      type_name(got));
}

bool CompactReader::read_bool(CType type) {
  if (type != CType::kBoolTrue && type != CType::kBoolFalse)
    throw ThriftError(std::string("thrift type mismatch: expected bool, found ") + type_name(type));
  if (pending_bool_) {
    pending_bool_ = false;
    return pending_bool_value_;
  }
  // Inside a list a bool is a whole byte.
  return read_byte() == 1;
}

int32_t CompactReader::read_i32(CType type) {
  if (!is_int(type)) expect(type, CType::kI32, "i32");
  if (type == CType::kByte) return static_cast<int8_t>(read_byte());
  int64_t v = read_zigzag();
  if (v < INT32_MIN || v > INT32_MAX) throw ThriftError("thrift i32 out of range");
  return static_cast<int32_t>(v);
}

int64_t CompactReader::read_i64(CType type) {
  if (!is_int(type)) expect(type, CType::kI64, "i64");
  if (type == CType::kByte) return static_cast<int8_t>(read_byte());
  return read_zigzag();
}

double CompactReader::read_double(CType type) {
  expect(type, CType::kDouble, "double");
  if (remaining() < 8) throw ThriftError("unexpected end of thrift data");
  double d;
  std::memcpy(&d, p_, 8);
  p_ += 8;
  return d;
}

std::string CompactReader::read_string(CType type) {
  expect(type, CType::kBinary, "binary");
  uint64_t n = read_varint();
  if (n > remaining()) throw ThriftError("thrift string length beyond the data");
  if (n == 0) return {};
  std::string s(reinterpret_cast<const char*>(p_), n);
  p_ += n;
  return s;
}

uint32_t CompactReader::read_list_header(CType type, CType& elem_type) {
  if (type != CType::kList && type != CType::kSet) expect(type, CType::kList, "list");
  uint8_t b = read_byte();
  uint64_t n = b >> 4;
  if (n == 15) n = read_varint();
  uint8_t t = b & 0x0f;
  if (t == 0 || t > 12) throw ThriftError("invalid thrift list element type");
  elem_type = static_cast<CType>(t);
  // Every element takes at least one byte, except bools which take one each too.
  if (n > remaining()) throw ThriftError("thrift list size beyond the data");
  return static_cast<uint32_t>(n);
}

void CompactReader::skip(CType type) { skip_depth(type, 0); }

void CompactReader::skip_depth(CType type, int depth) {
  if (depth > kMaxDepth) throw ThriftError("thrift values nested too deeply");
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      if (pending_bool_)
        pending_bool_ = false;
      else
        read_byte();
      return;
    case CType::kByte:
      read_byte();
      return;
    case CType::kI16:
    case CType::kI32:
    case CType::kI64:
      read_varint();
      return;
    case CType::kDouble:
      if (remaining() < 8) throw ThriftError("unexpected end of thrift data");
      p_ += 8;
      return;
    case CType::kBinary: {
      uint64_t n = read_varint();
      if (n > remaining()) throw ThriftError("thrift string length beyond the data");
      p_ += n;
      return;
    }
    case CType::kList:
    case CType::kSet: {
      CType et;
      uint32_t n = read_list_header(type, et);
      for (uint32_t i = 0; i < n; ++i) {
        pending_bool_ = false;
        skip_depth(et, depth + 1);
      }
      return;
    }
    case CType::kMap: {
      uint64_t n = read_varint();
      if (n == 0) return;
      if (n > remaining()) throw ThriftError("thrift map size beyond the data");
      uint8_t kv = read_byte();
      CType kt = static_cast<CType>(kv >> 4), vt = static_cast<CType>(kv & 0x0f);
      if ((kv >> 4) == 0 || (kv >> 4) > 12 || (kv & 0x0f) == 0 || (kv & 0x0f) > 12)
        throw ThriftError("invalid thrift map types");
      for (uint64_t i = 0; i < n; ++i) {
        pending_bool_ = false;
        skip_depth(kt, depth + 1);
        pending_bool_ = false;
        skip_depth(vt, depth + 1);
      }
      return;
    }
    case CType::kStruct: {
      begin_struct();
      int16_t id;
      CType t;
      while (next_field(id, t)) skip_depth(t, depth + 1);
      end_struct();
      return;
    }
    case CType::kStop:
      break;
  }
  throw ThriftError("cannot skip thrift type " + std::string(type_name(type)));
}

}  // namespace lmeval::thrift

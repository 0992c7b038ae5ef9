// Parquet page-level decoding: compression codecs, level encodings and value encodings.
#include "data/parquet_internal.hpp"

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <limits>

namespace lmeval::parquet::detail {

namespace {

[[noreturn]] void corrupt(const std::string& msg) { throw CorruptError(msg); }

// LZ4 block format (LZ4_RAW codec); small enough to carry instead of a dependency.
void lz4_block_decompress(const uint8_t* in, size_t n, uint8_t* out, size_t out_size) {
  const uint8_t* ip = in;
  const uint8_t* iend = in + n;
  size_t op = 0;
  auto read_len = [&](size_t len) {
    if (len == 15) {
      uint8_t b;
      do {
        if (ip >= iend) corrupt("LZ4 data truncated");
        b = *ip++;
        len += b;
      } while (b == 255);
    }
    return len;
  };
  while (ip < iend) {
    uint8_t token = *ip++;
    size_t lit = read_len(token >> 4);
    if (lit > static_cast<size_t>(iend - ip) || lit > out_size - op) corrupt("LZ4 literal overrun");
    std::memcpy(out + op, ip, lit);
    ip += lit;
    op += lit;
    if (ip >= iend) break;  // the last sequence has literals only
    if (iend - ip < 2) corrupt("LZ4 data truncated");
    size_t offset = ip[0] | (ip[1] << 8);
    ip += 2;
    if (offset == 0 || offset > op) corrupt("LZ4 match offset out of range");
    size_t mlen = read_len(token & 0x0f) + 4;
    if (mlen > out_size - op) corrupt("LZ4 match overrun");
    for (size_t i = 0; i < mlen; ++i, ++op) out[op] = out[op - offset];
  }
  if (op != out_size) corrupt("LZ4 output size differs from the page header");
}

uint64_t read_uvarint(const uint8_t*& p, const uint8_t* end) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) corrupt("varint beyond the page data");
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  corrupt("varint too long");
}

// Reads `width` bits (<= 64) starting at bit `bit` of p, LSB first; p has at least enough bytes.
inline uint64_t get_bits(const uint8_t* p, size_t bit, int width) {
  const uint8_t* q = p + (bit >> 3);
  int shift = static_cast<int>(bit & 7);
  int need = (shift + width + 7) >> 3;
  unsigned __int128 acc = 0;
  for (int i = 0; i < need; ++i) acc |= static_cast<unsigned __int128>(q[i]) << (8 * i);
  acc >>= shift;
  if (width == 64) return static_cast<uint64_t>(acc);
  return static_cast<uint64_t>(acc) & ((uint64_t{1} << width) - 1);
}

}  // namespace

void decompress(int32_t codec, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  switch (codec) {
    case kUncompressed:
      if (in_size != out_size) corrupt("uncompressed page size mismatch");
      if (out_size) std::memcpy(out, in, out_size);
      return;
    case kSnappy: {
      size_t len;
      if (snappy_uncompressed_length(reinterpret_cast<const char*>(in), in_size, &len) != SNAPPY_OK)
        corrupt("snappy decompression failed (bad header)");
      if (len != out_size) corrupt("snappy output size differs from the page header");
      if (snappy_uncompress(reinterpret_cast<const char*>(in), in_size,
                            reinterpret_cast<char*>(out), &len) != SNAPPY_OK)
        corrupt("snappy decompression failed");
      return;
    }
    case kGzip: {
      z_stream zs{};
      if (inflateInit2(&zs, 15 + 32) != Z_OK) corrupt("zlib init failed");
      zs.next_in = const_cast<Bytef*>(in);
      zs.avail_in = static_cast<uInt>(in_size);
      zs.next_out = out;
      zs.avail_out = static_cast<uInt>(out_size);
      int rc;
      do {
        rc = inflate(&zs, Z_FINISH);
        // Concatenated gzip members: continue with the next one.
        if (rc == Z_STREAM_END && zs.avail_in > 0 && zs.avail_out > 0) {
          inflateReset(&zs);
          rc = Z_OK;
          continue;
        }
      } while (rc == Z_OK && zs.avail_out > 0 && zs.avail_in > 0);
      size_t produced = out_size - zs.avail_out;
      inflateEnd(&zs);
      if ((rc != Z_STREAM_END && rc != Z_OK && rc != Z_BUF_ERROR) || produced != out_size)
        corrupt("gzip decompression failed");
      return;
    }
    case kZstd: {
      size_t r = ZSTD_decompress(out, out_size, in, in_size);
      if (ZSTD_isError(r))
        corrupt(std::string("zstd decompression failed: ") + ZSTD_getErrorName(r));
      if (r != out_size) corrupt("zstd output size differs from the page header");
      return;
    }
    case kLz4Raw:
      lz4_block_decompress(in, in_size, out, out_size);
      return;
    case kLzo:
      corrupt("unsupported compression codec LZO");
    case kBrotli:
      corrupt("unsupported compression codec BROTLI");
    case kLz4:
      corrupt("unsupported compression codec LZ4 (Hadoop framing; LZ4_RAW is supported)");
    default:
      corrupt("unknown compression codec " + std::to_string(codec));
  }
}

size_t decode_hybrid(const uint8_t* p, size_t n, int width, size_t count, uint32_t* out) {
  if (width < 0 || width > 32) corrupt("RLE bit width " + std::to_string(width) + " out of range");
  const uint8_t* s = p;
  const uint8_t* end = p + n;
  size_t done = 0;
  size_t value_bytes = (width + 7) / 8;
  while (done < count) {
    uint64_t header = read_uvarint(p, end);
    if (header & 1) {
      uint64_t groups = header >> 1;
      if (groups == 0) continue;
      if (groups > (static_cast<size_t>(end - p) / (width ? width : 1)) + 1 && width)
        corrupt("bit-packed run beyond the page data");
      size_t bytes = static_cast<size_t>(groups) * width;
      size_t avail = static_cast<size_t>(end - p);
      size_t values = groups * 8;
      size_t take = std::min<size_t>(values, count - done);
      // The final run may be cut short by the writer; only the values we take must be there.
      size_t need_bits = take * width;
      if ((need_bits + 7) / 8 > avail) corrupt("bit-packed run beyond the page data");
      if (width == 0) {
        std::fill(out + done, out + done + take, 0u);
      } else {
        for (size_t i = 0; i < take; ++i)
          out[done + i] = static_cast<uint32_t>(get_bits(p, i * width, width));
      }
      done += take;
      p += std::min(bytes, avail);
    } else {
      uint64_t run = header >> 1;
      if (static_cast<size_t>(end - p) < value_bytes) corrupt("RLE run beyond the page data");
      uint32_t v = 0;
      for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
      p += value_bytes;
      if (width < 32 && (v >> width)) corrupt("RLE value wider than its bit width");
      size_t take = std::min<uint64_t>(run, count - done);
      std::fill(out + done, out + done + take, v);
      done += take;
    }
  }
  return static_cast<size_t>(p - s);
}

size_t decode_bit_packed_msb(const uint8_t* p, size_t n, int width, size_t count, uint32_t* out) {
  if (width < 0 || width > 32) corrupt("bit width out of range");
  size_t bytes = (count * width + 7) / 8;
  if (bytes > n) corrupt("bit-packed levels beyond the page data");
  for (size_t i = 0; i < count; ++i) {
    uint32_t v = 0;
    for (int b = 0; b < width; ++b) {
      size_t bit = i * width + b;
      v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1);
    }
    out[i] = v;
  }
  return bytes;
}

size_t decode_delta_binary(const uint8_t* p, size_t n, size_t max_count,
                           std::vector<int64_t>& out) {
  const uint8_t* s = p;
  const uint8_t* end = p + n;
  uint64_t block_size = read_uvarint(p, end);
  uint64_t minis = read_uvarint(p, end);
  uint64_t total = read_uvarint(p, end);
  uint64_t zz = read_uvarint(p, end);
  int64_t first = static_cast<int64_t>(zz >> 1) ^ -static_cast<int64_t>(zz & 1);
  if (block_size == 0 || block_size % 128 != 0 || minis == 0 || block_size % minis != 0 ||
      (block_size / minis) % 32 != 0 || block_size > (1u << 20))
    corrupt("DELTA_BINARY_PACKED header is invalid");
  if (total > max_count) corrupt("DELTA_BINARY_PACKED holds more values than the page");
  if (total == 0) return static_cast<size_t>(p - s);
  uint64_t per_mini = block_size / minis;
  out.reserve(out.size() + total);
  uint64_t last = static_cast<uint64_t>(first);
  out.push_back(first);
  uint64_t left = total - 1;
  while (left > 0) {
    uint64_t zmin = read_uvarint(p, end);
    uint64_t min_delta =
        static_cast<uint64_t>(static_cast<int64_t>(zmin >> 1) ^ -static_cast<int64_t>(zmin & 1));
    if (static_cast<uint64_t>(end - p) < minis) corrupt("DELTA_BINARY_PACKED block truncated");
    const uint8_t* widths = p;
    p += minis;
    for (uint64_t m = 0; m < minis && left > 0; ++m) {
      int w = widths[m];
      if (w > 64) corrupt("DELTA_BINARY_PACKED miniblock bit width > 64");
      size_t bytes = per_mini * w / 8;
      if (static_cast<size_t>(end - p) < bytes) {
        // The last miniblock may be cut short if the writer did not pad it.
        size_t need = (std::min<uint64_t>(left, per_mini) * w + 7) / 8;
        if (static_cast<size_t>(end - p) < need) corrupt("DELTA_BINARY_PACKED miniblock truncated");
        bytes = static_cast<size_t>(end - p);
      }
      uint64_t take = std::min<uint64_t>(left, per_mini);
      for (uint64_t i = 0; i < take; ++i) {
        uint64_t d = w ? get_bits(p, i * w, w) : 0;
        last = last + min_delta + d;
        out.push_back(static_cast<int64_t>(last));
      }
      left -= take;
      p += bytes;
    }
  }
  return static_cast<size_t>(p - s);
}

size_t Values::size() const {
  switch (type) {
    case static_cast<int32_t>(Type::kFloat):
    case static_cast<int32_t>(Type::kDouble):
      return reals.size();
    case static_cast<int32_t>(Type::kByteArray):
    case static_cast<int32_t>(Type::kFixedLenByteArray):
    case static_cast<int32_t>(Type::kInt96):
      return bytes.size();
    default:
      return ints.size();
  }
}

void Values::append_from(const Values& dict, uint32_t index) {
  if (index >= dict.size()) corrupt("dictionary index " + std::to_string(index) + " out of range");
  switch (type) {
    case static_cast<int32_t>(Type::kFloat):
    case static_cast<int32_t>(Type::kDouble):
      reals.push_back(dict.reals[index]);
      break;
    case static_cast<int32_t>(Type::kByteArray):
    case static_cast<int32_t>(Type::kFixedLenByteArray):
    case static_cast<int32_t>(Type::kInt96):
      bytes.push_back(dict.bytes[index]);
      break;
    default:
      ints.push_back(dict.ints[index]);
  }
}

namespace {

size_t fixed_width(const Values& v) {
  switch (v.type) {
    case static_cast<int32_t>(Type::kInt32):
    case static_cast<int32_t>(Type::kFloat):
      return 4;
    case static_cast<int32_t>(Type::kInt64):
    case static_cast<int32_t>(Type::kDouble):
      return 8;
    case static_cast<int32_t>(Type::kInt96):
      return 12;
    case static_cast<int32_t>(Type::kFixedLenByteArray):
      return static_cast<size_t>(v.type_length);
    default:
      return 0;
  }
}

// Appends one fixed-width little-endian value from `p`.
inline void push_fixed(Values& out, const uint8_t* p) {
  switch (out.type) {
    case static_cast<int32_t>(Type::kInt32): {
      int32_t x;
      std::memcpy(&x, p, 4);
      out.ints.push_back(x);
      break;
    }
    case static_cast<int32_t>(Type::kInt64): {
      int64_t x;
      std::memcpy(&x, p, 8);
      out.ints.push_back(x);
      break;
    }
    case static_cast<int32_t>(Type::kFloat): {
      float x;
      std::memcpy(&x, p, 4);
      out.reals.push_back(x);
      break;
    }
    case static_cast<int32_t>(Type::kDouble): {
      double x;
      std::memcpy(&x, p, 8);
      out.reals.push_back(x);
      break;
    }
    default:
      corrupt("fixed-width value of an unexpected type");
  }
}

void decode_plain(const uint8_t* p, size_t n, size_t count, Values& out) {
  const uint8_t* end = p + n;
  if (out.type == static_cast<int32_t>(Type::kBoolean)) {
    if ((count + 7) / 8 > n) corrupt("PLAIN booleans beyond the page data");
    for (size_t i = 0; i < count; ++i) out.ints.push_back((p[i >> 3] >> (i & 7)) & 1);
    return;
  }
  if (out.type == static_cast<int32_t>(Type::kByteArray)) {
    out.bytes.reserve(out.bytes.size() + std::min(count, n / 4));
    for (size_t i = 0; i < count; ++i) {
      if (end - p < 4) corrupt("PLAIN byte array length beyond the page data");
      uint32_t len;
      std::memcpy(&len, p, 4);
      p += 4;
      if (len > static_cast<size_t>(end - p)) corrupt("PLAIN byte array beyond the page data");
      out.bytes.emplace_back(reinterpret_cast<const char*>(p), len);
      p += len;
    }
    return;
  }
  size_t w = fixed_width(out);
  if (w == 0) corrupt("invalid fixed length");
  if (count > n / w) corrupt("PLAIN values beyond the page data");
  if (out.type == static_cast<int32_t>(Type::kFixedLenByteArray) ||
      out.type == static_cast<int32_t>(Type::kInt96)) {
    for (size_t i = 0; i < count; ++i)
      out.bytes.emplace_back(reinterpret_cast<const char*>(p + i * w), w);
    return;
  }
  for (size_t i = 0; i < count; ++i) push_fixed(out, p + i * w);
}

}  // namespace

void decode_values(int32_t encoding, const uint8_t* p, size_t n, size_t count, Values& out,
                   std::vector<std::unique_ptr<std::string>>& arena) {
  const bool is_bytes = out.type == static_cast<int32_t>(Type::kByteArray);
  switch (encoding) {
    case kPlain:
      decode_plain(p, n, count, out);
      return;
    case kRle: {
      if (out.type != static_cast<int32_t>(Type::kBoolean)) corrupt("RLE values only for BOOLEAN");
      if (n < 4) corrupt("RLE boolean data truncated");
      uint32_t len;
      std::memcpy(&len, p, 4);
      if (len > n - 4) corrupt("RLE boolean length beyond the page data");
      std::vector<uint32_t> tmp(count);
      decode_hybrid(p + 4, len, 1, count, tmp.data());
      for (uint32_t v : tmp) out.ints.push_back(v);
      return;
    }
    case kDeltaBinaryPacked: {
      if (out.type != static_cast<int32_t>(Type::kInt32) &&
          out.type != static_cast<int32_t>(Type::kInt64))
        corrupt("DELTA_BINARY_PACKED only for INT32/INT64");
      size_t before = out.ints.size();
      decode_delta_binary(p, n, count, out.ints);
      if (out.ints.size() - before != count) corrupt("DELTA_BINARY_PACKED value count mismatch");
      if (out.type == static_cast<int32_t>(Type::kInt32))
        for (size_t i = before; i < out.ints.size(); ++i)
          out.ints[i] = static_cast<int32_t>(static_cast<uint32_t>(out.ints[i]));
      return;
    }
    case kDeltaLengthByteArray: {
      if (!is_bytes) corrupt("DELTA_LENGTH_BYTE_ARRAY only for BYTE_ARRAY");
      std::vector<int64_t> lens;
      size_t used = decode_delta_binary(p, n, count, lens);
      if (lens.size() != count) corrupt("DELTA_LENGTH_BYTE_ARRAY length count mismatch");
      const uint8_t* q = p + used;
      size_t left = n - used;
      for (int64_t len : lens) {
        if (len < 0 || static_cast<uint64_t>(len) > left)
          corrupt("DELTA_LENGTH_BYTE_ARRAY data truncated");
        out.bytes.emplace_back(reinterpret_cast<const char*>(q), static_cast<size_t>(len));
        q += len;
        left -= static_cast<size_t>(len);
      }
      return;
    }
    case kDeltaByteArray: {
      if (!is_bytes && out.type != static_cast<int32_t>(Type::kFixedLenByteArray))
        corrupt("DELTA_BYTE_ARRAY only for byte arrays");
      std::vector<int64_t> prefix, suffix;
      size_t used = decode_delta_binary(p, n, count, prefix);
      if (prefix.size() != count) corrupt("DELTA_BYTE_ARRAY prefix count mismatch");
      used += decode_delta_binary(p + used, n - used, count, suffix);
      if (suffix.size() != count) corrupt("DELTA_BYTE_ARRAY suffix count mismatch");
      // Total size first, so string_views into the arena stay valid.
      uint64_t total = 0;
      const uint8_t* q = p + used;
      size_t left = n - used;
      uint64_t prev_len = 0, suffix_total = 0;
      for (size_t i = 0; i < count; ++i) {
        if (prefix[i] < 0 || suffix[i] < 0 || static_cast<uint64_t>(prefix[i]) > prev_len)
          corrupt("DELTA_BYTE_ARRAY prefix longer than the previous value");
        suffix_total += static_cast<uint64_t>(suffix[i]);
        if (suffix_total > left) corrupt("DELTA_BYTE_ARRAY data truncated");
        prev_len = static_cast<uint64_t>(prefix[i]) + static_cast<uint64_t>(suffix[i]);
        total += prev_len;
        if (total > (uint64_t{1} << 32)) corrupt("DELTA_BYTE_ARRAY values too large");
      }
      auto buf = std::make_unique<std::string>();
      buf->resize(total);
      char* w = buf->data();
      const char* prev = w;
      size_t prev_size = 0;
      for (size_t i = 0; i < count; ++i) {
        char* start = w;
        std::memmove(w, prev, static_cast<size_t>(prefix[i]));
        w += prefix[i];
        std::memcpy(w, q, static_cast<size_t>(suffix[i]));
        w += suffix[i];
        q += suffix[i];
        prev = start;
        prev_size = static_cast<size_t>(w - start);
        out.bytes.emplace_back(start, prev_size);
      }
      arena.push_back(std::move(buf));
      return;
    }
    case kByteStreamSplit: {
      size_t w = fixed_width(out);
      if (w == 0 || is_bytes || out.type == static_cast<int32_t>(Type::kBoolean))
        corrupt("BYTE_STREAM_SPLIT on an unsupported type");
      if (count > n / w) corrupt("BYTE_STREAM_SPLIT data truncated");
      // Streams are `n / w` long (the page's value count), which may exceed `count` only if
      // corrupt.
      size_t stride = n / w;
      if (out.type == static_cast<int32_t>(Type::kFixedLenByteArray)) {
        auto buf = std::make_unique<std::string>(count * w, '\0');
        for (size_t i = 0; i < count; ++i)
          for (size_t b = 0; b < w; ++b) (*buf)[i * w + b] = static_cast<char>(p[b * stride + i]);
        for (size_t i = 0; i < count; ++i) out.bytes.emplace_back(buf->data() + i * w, w);
        arena.push_back(std::move(buf));
        return;
      }
      uint8_t tmp[8];
      for (size_t i = 0; i < count; ++i) {
        for (size_t b = 0; b < w; ++b) tmp[b] = p[b * stride + i];
        push_fixed(out, tmp);
      }
      return;
    }
    default:
      corrupt("unsupported value encoding " + std::to_string(encoding));
  }
}

}  // namespace lmeval::parquet::detail

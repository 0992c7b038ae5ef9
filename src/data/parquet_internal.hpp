// Internals of the parquet reader: footer structures, page decoding and decompression helpers.
#pragma once

#include "lmeval/data/parquet_reader.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lmeval::parquet::detail {

// Malformed data inside a column chunk; the reader adds file / row group / column to the message.
class CorruptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};
enum Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};
enum PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

struct ColumnMeta {
  int32_t type = -1;
  std::vector<std::string> path;
  int32_t codec = 0;
  int64_t num_values = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = -1;
  int64_t dictionary_page_offset = -1;
  bool has_meta = false;
  std::string file_path;  // external column file (unsupported)
};

struct RowGroupMeta {
  std::vector<ColumnMeta> columns;
  int64_t num_rows = 0;
};

struct FileMeta {
  std::vector<SchemaNode> schema;
  int64_t num_rows = 0;
  std::vector<RowGroupMeta> row_groups;
  std::string created_by;
};

// Parses FileMetaData (thrift compact); throws thrift::ThriftError or CorruptError.
FileMeta parse_file_meta(const uint8_t* data, size_t size);

struct PageHeader {
  int32_t type = -1;
  int32_t uncompressed_size = 0;
  int32_t compressed_size = 0;
  // DATA_PAGE / DATA_PAGE_V2 / DICTIONARY_PAGE fields
  int32_t num_values = 0;
  int32_t encoding = 0;
  int32_t def_encoding = kRle;
  int32_t rep_encoding = kRle;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t def_length = 0;     // v2
  int32_t rep_length = 0;     // v2
  bool is_compressed = true;  // v2
  bool has_data_header = false;
  bool has_dict_header = false;
  bool has_v2_header = false;
};

// Parses a PageHeader; `consumed` receives its length in bytes.
PageHeader parse_page_header(const uint8_t* data, size_t size, size_t& consumed);

// Decompresses `in` into exactly `out_size` bytes.
void decompress(int32_t codec, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size);

// Bit width needed for values 0..max_value.
inline int bit_width(uint32_t max_value) {
  int w = 0;
  while (max_value) {
    ++w;
    max_value >>= 1;
  }
  return w;
}

// RLE / bit-packed hybrid: decodes exactly `count` values; returns bytes consumed.
size_t decode_hybrid(const uint8_t* p, size_t n, int width, size_t count, uint32_t* out);
// Deprecated BIT_PACKED level encoding (MSB first); returns bytes consumed.
size_t decode_bit_packed_msb(const uint8_t* p, size_t n, int width, size_t count, uint32_t* out);
// DELTA_BINARY_PACKED: appends the values; returns bytes consumed. `max_count` bounds the header's
// count.
size_t decode_delta_binary(const uint8_t* p, size_t n, size_t max_count, std::vector<int64_t>& out);

// Decoded values of one leaf column (only for present, i.e. non-null, entries).
struct Values {
  int32_t type = -1;
  int32_t type_length = 0;
  std::vector<int64_t> ints;            // BOOLEAN (0/1), INT32, INT64
  std::vector<double> reals;            // FLOAT, DOUBLE
  std::vector<std::string_view> bytes;  // BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96
  size_t size() const;
  void append_from(const Values& dict, uint32_t index);
};

// Decodes `count` values in `encoding` from a page section, appending to `out`. String values may
// point into `data`, or into `arena` for encodings that build new strings.
void decode_values(int32_t encoding, const uint8_t* data, size_t n, size_t count, Values& out,
                   std::vector<std::unique_ptr<std::string>>& arena);

}  // namespace lmeval::parquet::detail

// Apache Parquet reader: file metadata, pages, encodings, compression, nested columns -> JSON rows.
#pragma once

#include "lmeval/data/data_source.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace lmeval::parquet {

// Physical types, encodings, codecs: values as in parquet.thrift.
enum class Type : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

// One node of the flattened schema (parquet.thrift SchemaElement), plus derived levels.
struct SchemaNode {
  std::string name;
  int32_t type = -1;  // physical Type for leaves, -1 for groups
  int32_t type_length = 0;
  int32_t repetition = 0;  // 0 REQUIRED, 1 OPTIONAL, 2 REPEATED
  int32_t converted_type = -1;
  int32_t scale = 0;
  int32_t precision = 0;
  int32_t logical = -1;       // LogicalType union field id (1 STRING, 3 LIST, 10 INTEGER, ...)
  int32_t int_bit_width = 0;  // INTEGER logical type
  bool int_signed = true;
  bool ts_adjusted_utc = false;
  int32_t time_unit = -1;     // 1 MILLIS, 2 MICROS, 3 NANOS
  std::vector<int> children;  // indices into the node list
  int parent = -1;
  int max_def = 0;  // definition level when this node is present
  int max_rep = 0;
  int first_leaf = 0;  // leaves under this node: [first_leaf, last_leaf)
  int last_leaf = 0;
  std::string path;  // dotted path from the root, for messages
};

struct ReadOptions {
  // Top-level column names to read; empty = all. Unknown names are a UserError.
  std::vector<std::string> columns;
};

class ParquetFile {
 public:
  // Reads the file and its footer. Throws UserError (naming the file) on malformed input.
  static ParquetFile open(const std::filesystem::path& path);
  // `data` holds the whole file; `name` is used in messages.
  static ParquetFile from_buffer(std::string data, std::string name);

  ParquetFile(ParquetFile&&) noexcept;
  ParquetFile& operator=(ParquetFile&&) noexcept;
  ~ParquetFile();

  int64_t num_rows() const;
  size_t num_row_groups() const;
  const std::string& name() const;
  const std::string& created_by() const;
  // Top-level column names in schema order.
  std::vector<std::string> column_names() const;
  const std::vector<SchemaNode>& schema() const;

  // Rows of one row group / of the whole file, keys in schema order.
  std::vector<Doc> read_row_group(size_t index, const ReadOptions& options = {}) const;
  std::vector<Doc> read_all(const ReadOptions& options = {}) const;

  struct Impl;

 private:
  explicit ParquetFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Shorthand: all rows of a file.
std::vector<Doc> read_parquet(const std::filesystem::path& path, const ReadOptions& options = {});

}  // namespace lmeval::parquet

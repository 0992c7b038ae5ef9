// The one Arrow-like schema `datasets` gives a split: type inference over rows and the casts that
// make every row of every file fit it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/data/data_source.hpp"

namespace lmeval::arrow {

// A column type as pyarrow infers it (its JSON reader, Table.from_pandas) plus datasets' `Json`
// feature, which keeps values of mixed types as they were written.
struct Type {
  enum Kind { kNull, kBool, kInt, kUInt, kFloat, kString, kBinary, kList, kStruct, kJson };
  struct Field;
  Kind kind = kNull;
  std::shared_ptr<Type> item;  // kList
  std::vector<Field> fields;   // kStruct, in first-seen order

  static Type of(Kind k);
  bool operator==(const Type& o) const;
};

// A struct's field: its key and type, read as a pair's first/second (a std::pair of the type
// being defined is not allowed: clang refuses pair<string, Type> inside Type).
struct Type::Field {
  std::string first;
  Type second;
  Field(std::string key, Type type) : first(std::move(key)), second(std::move(type)) {}
  bool operator==(const Field& o) const { return first == o.first && second == o.second; }
};

inline Type Type::of(Kind k) {
  Type t;
  t.kind = k;
  return t;
}

// The name pyarrow prints ("int64", "double", "large_string", "list<item: double>",
// "struct<a: int64>", "json"), for messages that compare two schemas.
std::string type_name(const Type& t);

// The schema of JSON rows as datasets' json builder infers it for one batch: pyarrow's JSON
// reader (columns in first-seen order, int and float promoted to double, a key absent from a row
// is null) with datasets' on_mixed_types="use_json" (packaged_modules/json/json.py,
// find_mixed_struct_types_field_paths): a nested mapping whose key sets differ between rows, an
// empty nested mapping and a value whose type changes between rows become `Json` (kept as
// written).
Type infer_json_rows(const std::vector<Doc>& rows);

// Casts each row in place to `schema` as datasets' table_cast does for a later file of the split:
// columns in the schema's order, absent ones null; int into double; an integral double into
// int64; numbers and booleans into strings. Throws UserError naming `origin` and the column where
// the cast fails (a column the schema lacks, 2.5 into int64, a value into a null column), as
// datasets fails with CastError / ArrowInvalid.
void conform_rows(std::vector<Doc>& rows, const Type& schema, const std::string& origin);

}  // namespace lmeval::arrow

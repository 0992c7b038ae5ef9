// CSV/TSV as datasets' csv builder reads them: pandas.read_csv (C parser) with the builder's
// defaults, in chunks of `chunksize` rows, each chunk typed on its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lmeval/data/arrow_schema.hpp"
#include "lmeval/data/data_source.hpp"

namespace lmeval {

// The read_csv parameters a task's dataset_kwargs may set (datasets' CsvConfig names).
struct CsvOptions {
  char sep = ',';
  char quotechar = '"';
  bool skipinitialspace = false;
  bool skip_blank_lines = true;
  bool keep_default_na = true;
  bool na_filter = true;
  std::vector<std::string> na_values;             // added to (or replacing) pandas' defaults
  std::optional<std::vector<std::string>> names;  // column_names / names: no header row read
  size_t chunksize = 10000;                       // CsvConfig.chunksize

  // The options from a task's dataset_kwargs (sep/delimiter, quotechar, skipinitialspace,
  // skip_blank_lines, keep_default_na, na_filter, na_values, column_names/names, chunksize).
  // A pandas option lm-eval does not implement (thousands, comment, converters, ...) is refused
  // naming it, rather than read differently; `origin` names the task file for the error.
  static CsvOptions from_kwargs(const Doc& kwargs, char default_sep, const std::string& origin);
};

// One chunk of rows and the Arrow schema pandas + Table.from_pandas give it.
struct CsvChunk {
  arrow::Type schema;  // a struct: columns in order with their types
  std::vector<Doc> rows;
  int first_line = 0;  // line of the chunk's first row in the file
};

// Parses CSV text (UTF-8, checked by the caller) into typed chunks. Column types per chunk as
// pandas infers them: int64 when every non-NA cell is an integer (spaces around it allowed),
// double when every one is a number or when an int column has NA cells, bool for
// True/true/TRUE/False/false/FALSE, else strings as written; NA cells (pandas' default NA strings,
// quoted or not) are null. Errors (a row with too many fields, an unterminated quote, an integer
// beyond uint64) name `origin` and the line, as pandas' ParserError / pyarrow's OverflowError.
std::vector<CsvChunk> read_csv(std::string_view text, const std::string& origin,
                               const CsvOptions& opts);

}  // namespace lmeval

// The rows of one split from its data files, read as datasets' packaged builders read them
// (json, csv, parquet, text) and made to fit one schema across all rows and files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lmeval/data/data_source.hpp"

namespace lmeval {

struct SplitReadOptions {
  // "json", "csv", "parquet", "text", or empty: by the first file's extension as datasets'
  // _EXTENSION_TO_MODULE does for a folder or a Hub repo (.tsv there is csv with sep "\t").
  std::string builder;
  Doc kwargs = Doc::object();  // dataset_kwargs: csv options, json `field`
  std::string origin;          // the task file, for errors about kwargs
};

// The builder datasets picks for a data file's extension ("" when it has none of ours).
std::string builder_for_extension(const std::filesystem::path& file);

// All rows of the split, in file order. Errors name the file and line (and the column) where
// datasets would fail: a CSV file whose columns or types differ from the first file's
// ("Schema at index 1 was different"; later chunks of one CSV file are cast to its first chunk's
// types), a JSON file with a column the first lacks, a value that
// cannot be cast (2.5 into an int64 column).
std::vector<Doc> read_split(const std::vector<std::filesystem::path>& files,
                            const SplitReadOptions& opts);

// Resolves one data_files entry against `base` as datasets' resolve_pattern does: a plain path or
// a glob (`*`, `?`, `[..]`, `**`), files only, hidden files and folders left out unless the
// pattern names them, sorted. Empty when nothing matches.
std::vector<std::filesystem::path> resolve_data_pattern(const std::string& pattern,
                                                        const std::filesystem::path& base);

}  // namespace lmeval

// Documents from local files: a data dir laid out `<org>/<name>/<config>/<split>.jsonl`,
// `dataset_path: json|csv` with data_files, and dataset_path pointing at a local file or folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/data/data_source.hpp"

namespace lmeval {

// Reads one file into rows: .jsonl (one object per line), .json (an array, or an object with a
// list under "data"), .csv/.tsv (header row; columns typed int, float or string like pandas).
// Errors name the file and line (row) and what was expected.
std::vector<Doc> read_rows(const std::filesystem::path& file);
// JSON lines text (already checked to be UTF-8) into rows; errors name `origin`, the line and
// the byte offset. Rows nested deeper than kMaxNestingDepth are refused before parsing.
std::vector<Doc> parse_jsonl(std::string_view text, const std::string& origin);

class LocalDataSource : public DataSource {
 public:
  // data_dir may be empty (then only local-file datasets resolve).
  explicit LocalDataSource(std::filesystem::path data_dir = {});
  std::optional<std::vector<Doc>> load_split(const DatasetRef& ref,
                                             const std::string& split) override;
  std::string describe() const override;

  // The file a Hub-style dataset split maps to under data_dir (whether or not it exists).
  std::filesystem::path split_file(const DatasetRef& ref, const std::string& split) const;
  // True when data_dir has a folder for this dataset (any config).
  bool has_dataset(const DatasetRef& ref) const;

 private:
  std::filesystem::path data_dir_;
};

// Tries each source in order; the first that knows the dataset answers.
class ChainDataSource : public DataSource {
 public:
  void add(std::shared_ptr<DataSource> source) { sources_.push_back(std::move(source)); }
  std::optional<std::vector<Doc>> load_split(const DatasetRef& ref,
                                             const std::string& split) override;
  std::string describe() const override;
  bool empty() const { return sources_.empty(); }

 private:
  std::vector<std::shared_ptr<DataSource>> sources_;
};

}  // namespace lmeval

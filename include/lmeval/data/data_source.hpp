// Where documents come from: the DataSource interface and the local
// `<org>/<name>/<config>/<split>.jsonl` layout.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmeval {

using Doc = nlohmann::ordered_json;  // one row, keys in the dataset's column order

// The arguments of the reference's datasets.load_dataset(path, name, **kwargs).
struct DatasetRef {
  std::string path;  // dataset_path: hub id, builder name (json/csv/parquet), or local path
  std::optional<std::string> name;                                   // dataset_name (config)
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // dataset_kwargs
  std::filesystem::path base_dir;  // directory of the task YAML, for relative data_files
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // The split's rows in order, or nullopt when this source does not have that split.
  // Throws UserError naming the file and row for malformed data.
  virtual std::optional<std::vector<Doc>> load_split(const DatasetRef& ref,
                                                     const std::string& split) = 0;
  // One line for messages ("local data dir /x", "Hugging Face Hub").
  virtual std::string describe() const = 0;
};

}  // namespace lmeval

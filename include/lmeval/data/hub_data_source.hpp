// Datasets from the Hugging Face Hub: data-file resolution as the `datasets` library does it.
#pragma once

#include "lmeval/core/error.hpp"
#include "lmeval/data/data_source.hpp"
#include "lmeval/data/hub_client.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmeval {

namespace hub {

// fsspec-style glob: `*` and `?` stay within a path segment, `**` crosses segments ("**/" may
// match nothing), `[...]` character classes with `!`/`^` negation and ranges.
bool glob_match(const std::string& pattern, const std::string& path);

// True for the file types the `datasets` packaged builders read (parquet, json/jsonl, csv/tsv, txt,
// arrow).
bool is_data_file(const std::string& path);

// Split name -> repo paths (sorted), in the order the splits were declared/found.
using SplitFiles = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct ResolvedConfig {
  std::string config;  // the config chosen ("default" when the repo has just one)
  SplitFiles splits;
  SplitFiles patterns;               // split -> the patterns that chose its files (for messages)
  std::vector<std::string> configs;  // every config the repo declares (for messages)
};

// Chooses the data files of a config the way `datasets` does for a data-file repo: the README's
// YAML `configs:` section if present, else `data_files` from dataset_kwargs, else the
// conventional split patterns (data/<split>-NNNNN-of-NNNNN.*, <split>.*, <split>/..., with the
// split keyword aliases train/training, validation/valid/dev/val, test/testing/eval/evaluation),
// inside `<config>/` when a named config is a folder. Throws UserError for an unknown config.
ResolvedConfig resolve_data_files(const std::vector<std::string>& repo_files,
                                  const std::string& readme,
                                  const std::optional<std::string>& config,
                                  const nlohmann::ordered_json& data_files = nullptr);

}  // namespace hub

class HubDataSource : public DataSource {
 public:
  // Default client: HubConfig::from_env(/*datasets=*/true) (HF_DATASETS_OFFLINE honoured).
  explicit HubDataSource(std::shared_ptr<hub::HubClient> client = nullptr);

  std::optional<std::vector<Doc>> load_split(const DatasetRef& ref,
                                             const std::string& split) override;
  std::string describe() const override;

  // Downloads (or finds in the cache) every file of the given splits (all when empty) and returns
  // their local paths; for `lm-eval download`. Offline: one UserError listing all that is missing.
  std::vector<std::filesystem::path> fetch(const DatasetRef& ref,
                                           const std::vector<std::string>& splits);

  hub::HubClient& client() { return *client_; }

  // True when `path` can only be a Hub dataset id (not a builder name, not an existing local path).
  static bool is_hub_id(const DatasetRef& ref);

 private:
  struct Resolved {
    hub::RepoRef repo;  // revision = what was asked
    std::string commit;
    hub::ResolvedConfig config;
  };
  Resolved resolve(const DatasetRef& ref);
  UserError no_files(const Resolved& r, const std::vector<std::string>& splits) const;
  std::vector<std::filesystem::path> local_files(const Resolved& r,
                                                 const std::vector<std::string>& files);

  std::shared_ptr<hub::HubClient> client_;
  std::map<std::string, Resolved> memo_;  // by repo/revision/config/data_files
};

// Rows of one data file by extension: .parquet (our reader), .jsonl/.json/.csv/.tsv (read_rows),
// .txt ({"text": line} per line, like the `text` builder).
std::vector<Doc> read_data_file(const std::filesystem::path& file);

}  // namespace lmeval

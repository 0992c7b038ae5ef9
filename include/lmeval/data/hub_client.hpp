// Hugging Face Hub client: revision resolution, file listing, cached downloads (huggingface_hub
// layout).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lmeval::hub {

enum class RepoType { kModel, kDataset };

struct RepoRef {
  RepoType type = RepoType::kModel;
  std::string id;                 // "org/name"
  std::string revision = "main";  // branch, tag, commit sha, or e.g. "refs/convert/parquet"
};

struct HubConfig {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT
  std::filesystem::path
      cache_dir;  // HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
  std::optional<std::string> token;  // HF_TOKEN, HF_HUB_TOKEN, $HF_HOME/token
  bool offline = false;              // HF_HUB_OFFLINE
  int max_retries = 5;               // for 429 / 5xx / connection errors
  double backoff_seconds = 1.0;      // first retry delay, doubled each time (max 16 s)
  long connect_timeout_s = 10;
  long low_speed_timeout_s = 60;  // abort a transfer stalled this long
  bool progress = false;          // progress bar on stderr for large files
  // From the environment; `datasets` = also honour HF_DATASETS_OFFLINE.
  static HubConfig from_env(bool datasets = false);
};

// Folder name of a repo in the cache: "datasets--org--name" / "models--org--name".
std::string repo_folder_name(const RepoRef& repo);
// Percent-encodes everything but unreserved characters (and '/' when keep_slash): Python's
// urllib.parse.quote with safe="/" or safe="".
std::string url_quote(const std::string& s, bool keep_slash);
// True for a 40-hex-digit commit id.
bool is_commit_hash(const std::string& s);

// Fired when a file cannot be found offline: what exactly is missing.
struct MissingFiles {
  RepoRef repo;
  std::vector<std::string> files;  // empty = the revision itself is unknown to the cache
};

class HubClient {
 public:
  explicit HubClient(HubConfig config = HubConfig::from_env());
  ~HubClient();
  HubClient(const HubClient&) = delete;
  HubClient& operator=(const HubClient&) = delete;

  const HubConfig& config() const { return config_; }

  struct RepoInfo {
    std::string commit;              // resolved 40-hex commit
    std::vector<std::string> files;  // repo paths at that commit
    bool from_cache = false;         // answered from the cache (offline or Hub unreachable)
  };
  // Resolves the revision and lists the repo's files (API /api/<type>s/<id>/revision/<rev>).
  // Offline (or when the Hub cannot be reached) the cache answers; throws UserError when neither
  // can.
  RepoInfo repo_info(const RepoRef& repo);

  // Path of `filename` in the snapshot of `commit`, downloading it if needed.
  std::filesystem::path download(const RepoRef& repo, const std::string& commit,
                                 const std::string& filename);
  // As above but returns nullopt when the file does not exist in the repo (404).
  std::optional<std::filesystem::path> try_download(const RepoRef& repo, const std::string& commit,
                                                    const std::string& filename);

  // <cache>/<repo folder>
  std::filesystem::path repo_cache_dir(const RepoRef& repo) const;
  std::filesystem::path snapshot_dir(const RepoRef& repo, const std::string& commit) const;
  // Commit the cache's refs/<revision> names (or the revision itself when it is a commit with a
  // snapshot).
  std::optional<std::string> cached_commit(const RepoRef& repo) const;

  // Counters for tests and logs.
  int requests_made() const { return requests_; }

  // Replaces the token wherever it appears (for messages).
  std::string scrub(std::string text) const;

  // One API call with a body (the upload side, data/hub_upload.hpp).
  struct ApiCall {
    std::string method = "GET";
    std::string url;  // a path under the endpoint ("/api/..."), or an absolute URL
    std::string body;
    std::vector<std::string> headers;  // "Name: value"
    // Off for URLs the Hub hands out for storage (LFS upload actions): the token stays with the
    // Hub.
    bool send_token = true;
  };
  struct ApiAnswer {
    long status = 0;
    std::string body;        // token scrubbed
    std::string error_code;  // X-Error-Code
  };
  // Retried like the reads on 429, 5xx and connection errors; any HTTP status comes back. Throws
  // RuntimeError (token scrubbed) when the Hub cannot be reached.
  ApiAnswer call_api(const ApiCall& call);

 private:
  struct Response;
  Response request(const std::string& method, const std::string& url, const std::string& what,
                   std::FILE* sink = nullptr, uint64_t resume_from = 0, bool follow = true,
                   const ApiCall* call = nullptr);
  std::string api_url(const RepoRef& repo) const;
  std::string resolve_url(const RepoRef& repo, const std::string& revision,
                          const std::string& filename) const;
  RepoInfo cached_repo_info(const RepoRef& repo) const;
  void write_ref(const RepoRef& repo, const std::string& commit) const;

  HubConfig config_;
  int requests_ = 0;
};

// Model files for `pretrained=`: a local folder passes through (joined with `subfolder`);
// otherwise config, tokenizer and weight files (safetensors, sharded too; else pytorch .bin) of
// the Hub repo's `subfolder` ("" = its top level) are fetched into the cache and the snapshot's
// folder is returned.
std::filesystem::path resolve_model_dir(const std::string& repo_or_path,
                                        const std::string& revision = "main",
                                        const std::string& subfolder = "");
std::filesystem::path resolve_model_dir(HubClient& client, const std::string& repo_or_path,
                                        const std::string& revision = "main",
                                        const std::string& subfolder = "");

// The files of a model repo that resolve_model_dir fetches, chosen from a listing (repo paths,
// those directly inside `subfolder`).
std::vector<std::string> select_model_files(const std::vector<std::string>& files,
                                            const std::string& subfolder = "");

// A PEFT adapter for `peft=`: a local folder passes through; otherwise the Hub repo's
// adapter_config.json and adapter_model.safetensors (else adapter_model.bin) are fetched.
std::filesystem::path resolve_adapter_dir(const std::string& repo_or_path,
                                          const std::string& revision = "main");
std::filesystem::path resolve_adapter_dir(HubClient& client, const std::string& repo_or_path,
                                          const std::string& revision = "main");

}  // namespace lmeval::hub

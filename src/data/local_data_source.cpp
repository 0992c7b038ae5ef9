// Local document loaders (jsonl/json/csv/tsv) and the data-dir layout.
#include "lmeval/data/local_data_source.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/data/split_reader.hpp"

namespace lmeval {

namespace fs = std::filesystem;

std::vector<Doc> read_rows(const fs::path& file) { return read_split({file}, {}); }

LocalDataSource::LocalDataSource(fs::path data_dir) : data_dir_(std::move(data_dir)) {}

std::string LocalDataSource::describe() const {
  return data_dir_.empty() ? "local files" : "local data dir " + data_dir_.string();
}

fs::path LocalDataSource::split_file(const DatasetRef& ref, const std::string& split) const {
  return data_dir_ / ref.path / ref.name.value_or("default") / (split + ".jsonl");
}

bool LocalDataSource::has_dataset(const DatasetRef& ref) const {
  return !data_dir_.empty() && fs::is_directory(data_dir_ / ref.path);
}

// A data file named by an `hf://datasets/ORG/NAME[@REVISION]/PATH` URL (huggingface_hub's
// HfFileSystem, which `datasets` reads data_files through): that file of the Hub dataset repo,
// from the Hub cache or downloaded into it. RuntimeError when neither can give it (offline and not
// cached, Hub unreachable): a fact about this machine, as for a Hub dataset.
static fs::path hub_data_file(const std::string& url) {
  const std::string prefix = "hf://datasets/";
  std::string rest = url.substr(prefix.size());
  size_t org_end = rest.find('/');
  size_t name_end = org_end == std::string::npos ? org_end : rest.find('/', org_end + 1);
  if (name_end == std::string::npos)
    throw UserError("a Hub data file URL needs a repo and a file", {url, 0, 0, "data_files"},
                    "hf://datasets/<org>/<name>[@<revision>]/<path in the repo>");
  hub::RepoRef repo;
  repo.type = hub::RepoType::kDataset;
  repo.id = rest.substr(0, name_end);
  if (size_t at = repo.id.find('@'); at != std::string::npos) {
    repo.revision = repo.id.substr(at + 1);
    repo.id.resize(at);
  }
  const std::string file = rest.substr(name_end + 1);
  static hub::HubClient client(hub::HubConfig::from_env(/*datasets=*/true));
  try {
    hub::HubClient::RepoInfo info = client.repo_info(repo);
    return client.download(repo, info.commit, file);
  } catch (const std::exception& e) {
    throw RuntimeError("data file " + url + " is not in the Hugging Face cache and could not be " +
                       "downloaded: " + e.what());
  }
}

// The working folder, where datasets resolves a relative data_files entry for a packaged builder
// (PackagedDatasetModuleFactory: base_path = Path(data_dir or "").resolve()).
static fs::path working_folder() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  return ec ? fs::path(".") : cwd;
}

// One data_files entry: what datasets finds from `base`; where it finds nothing, the same entry
// beside the task's YAML (`yaml_dir`), said in a warning; neither: datasets' FileNotFoundError.
static std::vector<fs::path> resolve_entry(const std::string& s, const fs::path& base,
                                           const fs::path& yaml_dir) {
  if (s.rfind("hf://datasets/", 0) == 0) return {hub_data_file(s)};
  auto found = resolve_data_pattern(s, base);
  if (!found.empty()) return found;
  if (!fs::path(s).is_absolute() && !yaml_dir.empty() &&
      fs::weakly_canonical(yaml_dir) != fs::weakly_canonical(base)) {
    found = resolve_data_pattern(s, yaml_dir);
    if (!found.empty()) {
      log::warn("data_files '" + s + "' matches nothing in " + base.string() +
                " (where the reference's datasets looks); lm-eval reads it from the task's " +
                "folder " + yaml_dir.string() + " instead. The reference fails on this task " +
                "unless it is run from that folder.");
      return found;
    }
  }
  std::error_code ec;
  fs::path plain = fs::path(s).is_absolute() ? fs::path(s) : base / s;
  if (fs::is_directory(plain, ec))
    // datasets skips folders when it resolves data_files, then finds nothing.
    throw UserError("is a folder, not a data file", {plain.string(), 0, 0, "data_files"},
                    "a .jsonl, .json, .parquet, .csv, .tsv or .txt file or a glob such as "
                    "folder/*.jsonl (datasets: Unable to find)");
  throw UserError(
      "Unable to find '" + s + "'", {(base / s).string(), 0, 0, "data_files"},
      "a data file or glob relative to the folder lm-eval runs in (" + base.string() +
          ") as datasets resolves it" +
          (yaml_dir.empty() ? std::string() : ", or to the task's folder " + yaml_dir.string()));
}

static std::vector<fs::path> data_files_for(const nlohmann::ordered_json& files,
                                            const std::string& split, const fs::path& base,
                                            const fs::path& yaml_dir) {
  std::vector<fs::path> out;
  auto add = [&](const nlohmann::ordered_json& v) {
    auto one = [&](const std::string& s) {
      for (auto& p : resolve_entry(s, base, yaml_dir)) out.push_back(std::move(p));
    };
    if (v.is_string()) {
      one(v.get<std::string>());
    } else if (v.is_array()) {
      for (const auto& e : v)
        if (e.is_string()) one(e.get<std::string>());
    }
  };
  if (files.is_object()) {
    if (files.contains(split)) add(files[split]);
  } else if (split == "train") {
    add(files);  // a plain string or list is the `train` split, as in `datasets`
  }
  return out;
}

std::optional<std::vector<Doc>> LocalDataSource::load_split(const DatasetRef& ref,
                                                            const std::string& split) {
  static const std::vector<std::string> builders = {"json", "csv", "parquet", "text", "arrow"};
  bool builder = std::find(builders.begin(), builders.end(), ref.path) != builders.end();
  nlohmann::ordered_json files = ref.kwargs.is_object() && ref.kwargs.contains("data_files")
                                     ? ref.kwargs["data_files"]
                                     : nlohmann::ordered_json();
  const fs::path yaml_dir = ref.base_dir;
  // dataset_path naming a local file or folder: datasets looks for it from the working folder.
  fs::path local = ref.path;
  if (!builder && !local.is_absolute() && !fs::exists(local) && !yaml_dir.empty() &&
      fs::exists(yaml_dir / local)) {
    log::warn("dataset_path '" + ref.path + "' is not in the folder lm-eval runs in (where the " +
              "reference's datasets looks); lm-eval reads it from the task's folder " +
              yaml_dir.string() + " instead");
    local = yaml_dir / local;
  }
  if (builder || !files.is_null()) {
    fs::path base = working_folder();
    if (ref.kwargs.is_object() && ref.kwargs.contains("data_dir") &&
        ref.kwargs["data_dir"].is_string())
      base = base / ref.kwargs["data_dir"].get<std::string>();
    if (!builder && fs::is_directory(local)) base = local;
    auto paths = data_files_for(files, split, base, yaml_dir);
    if (paths.empty()) return std::nullopt;
    SplitReadOptions opts;
    if (builder) opts.builder = ref.path;
    opts.kwargs = ref.kwargs;
    opts.origin = yaml_dir.string();
    return read_split(paths, opts);
  }
  if (fs::is_regular_file(local)) {
    if (split != "train") return std::nullopt;
    return read_rows(local);
  }
  if (fs::is_directory(local) && !has_dataset(ref)) {
    for (const auto& ext : {".jsonl", ".json", ".csv", ".tsv"}) {
      for (const fs::path& cand :
           {local / ref.name.value_or("default") / (split + ext), local / (split + ext)})
        if (fs::exists(cand)) return read_rows(cand);
    }
    return std::nullopt;
  }
  if (data_dir_.empty()) return std::nullopt;
  fs::path f = split_file(ref, split);
  if (fs::exists(f)) return read_rows(f);
  for (const auto& ext : {".json", ".csv"}) {
    fs::path alt = f;
    alt.replace_extension(ext);
    if (fs::exists(alt)) return read_rows(alt);
  }
  return std::nullopt;
}

std::optional<std::vector<Doc>> ChainDataSource::load_split(const DatasetRef& ref,
                                                            const std::string& split) {
  for (auto& s : sources_) {
    auto r = s->load_split(ref, split);
    if (r) return r;
  }
  return std::nullopt;
}

std::string ChainDataSource::describe() const {
  std::string out;
  for (const auto& s : sources_) {
    if (!out.empty()) out += ", then ";
    out += s->describe();
  }
  return out.empty() ? "no data source" : out;
}

}  // namespace lmeval

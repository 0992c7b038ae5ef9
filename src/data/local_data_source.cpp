// Local document loaders (jsonl/json/csv/tsv) and the data-dir layout.
#include "lmeval/data/local_data_source.hpp"

#include <fstream>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/data/parquet_reader.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

// The whole file, checked to be UTF-8 (the reference's readers decode it as UTF-8 and stop on
// the first bad byte; here the error names line and byte offset).
std::string read_text(const fs::path& file) {
  std::error_code ec;
  if (fs::is_directory(file, ec))
    throw UserError(
        "is a folder, not a data file", {file.string(), 0, 0, ""},
        "a .jsonl, .json, .parquet, .csv or .tsv file; name the file inside the folder");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError("cannot read data file", {file.string(), 0, 0, ""}, "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw UserError("cannot read data file", {file.string(), 0, 0, ""}, "a readable file");
  std::string text = ss.str();
  require_utf8(text, file.string());
  return text;
}

std::vector<Doc> read_jsonl(const fs::path& file) {
  return parse_jsonl(read_text(file), file.string());
}

}  // namespace

std::vector<Doc> parse_jsonl(std::string_view text, const std::string& origin) {
  const fs::path file = origin;
  std::vector<Doc> rows;
  size_t start = 0;
  int line = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view l(text.data() + start, (nl == std::string::npos ? text.size() : nl) - start);
    ++line;
    start = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = l.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) continue;
    require_json_nesting(l, file.string(), static_cast<size_t>(l.data() - text.data()), line);
    try {
      Doc d = Doc::parse(l);
      if (!d.is_object())
        throw UserError("row is not a JSON object", {file.string(), line, 0, ""},
                        "one JSON object per line");
      rows.push_back(std::move(d));
    } catch (const nlohmann::json::out_of_range& e) {
      throw_json_number_overflow(e, l, file.string(), line);
    } catch (const nlohmann::json::parse_error& e) {
      throw UserError("malformed JSON: " + json_error_text(e.what()),
                      {file.string(), line, static_cast<int>(e.byte), ""},
                      "one JSON object per line");
    }
  }
  return rows;
}

namespace {

std::vector<Doc> read_json(const fs::path& file) {
  Doc d;
  std::string text = read_text(file);
  require_json_nesting(text, file.string());
  try {
    d = Doc::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    throw_json_number_overflow(e, text, file.string());
  } catch (const nlohmann::json::parse_error& e) {
    size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw UserError(
        "malformed JSON at byte offset " + std::to_string(at) + ": " + json_error_text(e.what()),
        {file.string(), line_of_offset(text, at), 0, ""},
        "a JSON array of objects or an object with a \"data\" list");
  }
  if (d.is_object() && d.contains("data") && d["data"].is_array()) d = d["data"];
  if (!d.is_array())
    throw UserError("not a list of rows", {file.string(), 0, 0, ""},
                    "a JSON array of objects or an object with a \"data\" list");
  std::vector<Doc> rows;
  size_t i = 0;
  for (auto& r : d) {
    if (!r.is_object())
      throw UserError("row " + std::to_string(i) + " is not a JSON object",
                      {file.string(), 0, 0, "[" + std::to_string(i) + "]"}, "objects");
    rows.push_back(std::move(r));
    ++i;
  }
  return rows;
}

// RFC 4180 fields (quotes, doubled quotes, newlines inside quotes).
std::vector<std::vector<std::string>> parse_delimited(const std::string& text, char sep,
                                                      const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  size_t i = 0;
  int line = 1;
  if (text.rfind("\xef\xbb\xbf", 0) == 0) i = 3;  // BOM
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
      any = true;
    } else if (c == sep) {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty() || !row.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
      ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted)
    throw UserError("unterminated quoted field", {file.string(), line, 0, ""}, "a closing \"");
  if (any || !field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  try {
    out = std::stoll(s);
    return true;
  } catch (...) {
    return false;
  }
}

bool parse_float(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

std::vector<Doc> read_delimited(const fs::path& file, char sep) {
  auto table = parse_delimited(read_text(file), sep, file);
  std::vector<Doc> rows;
  if (table.empty()) return rows;
  const auto& header = table[0];
  size_t ncol = header.size();
  // Column types like pandas' inference: int if every cell is an int, float if every cell is a
  // number, else string.
  std::vector<int> kind(ncol, 0);  // 0 int, 1 float, 2 string
  for (size_t r = 1; r < table.size(); ++r) {
    if (table[r].size() != ncol)
      throw UserError("row has " + std::to_string(table[r].size()) + " fields",
                      {file.string(), static_cast<int>(r + 1), 0, ""},
                      std::to_string(ncol) + " fields as in the header");
    for (size_t c = 0; c < ncol; ++c) {
      int64_t iv;
      double dv;
      if (kind[c] == 0 && !parse_int(table[r][c], iv)) kind[c] = 1;
      if (kind[c] == 1 && !parse_float(table[r][c], dv)) kind[c] = 2;
    }
  }
  for (size_t r = 1; r < table.size(); ++r) {
    Doc d = Doc::object();
    for (size_t c = 0; c < ncol; ++c) {
      const std::string& cell = table[r][c];
      if (kind[c] == 0)
        d[header[c]] = std::stoll(cell);
      else if (kind[c] == 1)
        d[header[c]] = std::strtod(cell.c_str(), nullptr);
      else
        d[header[c]] = cell;
    }
    rows.push_back(std::move(d));
  }
  return rows;
}

std::string lower_ext(const fs::path& p) {
  std::string e = p.extension().string();
  for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

}  // namespace

// Parquet through the project's own reader (src/data/parquet_*).
static std::vector<Doc> read_parquet_rows(const fs::path& file) {
  return parquet::read_parquet(file);
}

std::vector<Doc> read_rows(const fs::path& file) {
  if (!fs::exists(file))
    throw UserError("data file not found", {file.string(), 0, 0, ""}, "an existing file");
  if (fs::is_directory(file))
    throw UserError(
        "is a folder, not a data file", {file.string(), 0, 0, ""},
        "a .jsonl, .json, .parquet, .csv or .tsv file; name the file inside the folder");
  std::string ext = lower_ext(file);
  if (ext == ".jsonl" || ext == ".ndjson") return read_jsonl(file);
  if (ext == ".json") {
    // Hub json files are often JSON lines with a .json name.
    std::ifstream in(file);
    char c = 0;
    while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
    }
    if (c == '[') return read_json(file);
    std::string text = read_text(file);
    try {
      return read_json(file);
    } catch (const UserError&) {
      return read_jsonl(file);
    }
  }
  if (ext == ".parquet") return read_parquet_rows(file);
  if (ext == ".csv") return read_delimited(file, ',');
  if (ext == ".tsv") return read_delimited(file, '\t');
  throw UserError("unsupported data file type '" + ext + "'", {file.string(), 0, 0, ""},
                  ".jsonl, .json, .parquet, .csv or .tsv");
}

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

static std::vector<fs::path> data_files_for(const nlohmann::ordered_json& files,
                                            const std::string& split, const fs::path& base) {
  std::vector<fs::path> out;
  auto one = [&](const std::string& s) {
    if (s.rfind("hf://datasets/", 0) == 0) return hub_data_file(s);
    fs::path p = s;
    return p.is_absolute() ? p : base / p;
  };
  auto add = [&](const nlohmann::ordered_json& v) {
    if (v.is_string()) {
      out.push_back(one(v.get<std::string>()));
    } else if (v.is_array()) {
      for (const auto& e : v)
        if (e.is_string()) out.push_back(one(e.get<std::string>()));
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
  if (builder || !files.is_null()) {
    fs::path base = ref.base_dir;
    if (!builder && fs::is_directory(ref.path)) base = ref.path;
    auto paths = data_files_for(files, split, base);
    if (paths.empty()) return std::nullopt;
    std::vector<Doc> rows;
    for (const auto& p : paths) {
      auto part = read_rows(p);
      rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                  std::make_move_iterator(part.end()));
    }
    return rows;
  }
  // dataset_path naming a local file or folder.
  fs::path local = ref.path;
  if (!local.is_absolute() && !ref.base_dir.empty() && fs::exists(ref.base_dir / local))
    local = ref.base_dir / local;
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

// Hub datasets: README `configs:` / conventional data-file patterns, parquet branch fallback,
// loading.
#include "lmeval/data/hub_data_source.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/data/parquet_reader.hpp"
#include "lmeval/data/split_reader.hpp"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

namespace fs = std::filesystem;

namespace lmeval {

namespace hub {

namespace {

bool match_class(const char*& p, char c, bool& ok) {
  // p points at '['; on success p moves past ']'.
  const char* q = p + 1;
  bool negate = false;
  if (*q == '!' || *q == '^') {
    negate = true;
    ++q;
  }
  bool hit = false;
  bool first = true;
  while (*q && (*q != ']' || first)) {
    first = false;
    char lo = *q;
    if (q[1] == '-' && q[2] && q[2] != ']') {
      char hi = q[2];
      if (c >= lo && c <= hi) hit = true;
      q += 3;
    } else {
      if (c == lo) hit = true;
      ++q;
    }
  }
  if (*q != ']') return false;  // not a class: caller treats '[' literally
  p = q + 1;
  ok = hit != negate;
  return true;
}

bool match_at(const char* p, const char* s) {
  while (*p) {
    if (p[0] == '*' && p[1] == '*') {
      const char* rest = p + 2;
      if (*rest == '/') {
        ++rest;
        if (match_at(rest, s)) return true;
        for (const char* t = s; *t; ++t)
          if (*t == '/' && match_at(rest, t + 1)) return true;
        return false;
      }
      for (const char* t = s;; ++t) {
        if (match_at(rest, t)) return true;
        if (!*t) return false;
      }
    }
    if (*p == '*') {
      for (const char* t = s;; ++t) {
        if (match_at(p + 1, t)) return true;
        if (!*t || *t == '/') return false;
      }
    }
    if (*p == '?') {
      if (!*s || *s == '/') return false;
      ++p;
      ++s;
      continue;
    }
    if (*p == '[') {
      if (!*s || *s == '/') return false;
      const char* q = p;
      bool ok = false;
      if (match_class(q, *s, ok)) {
        if (!ok) return false;
        p = q;
        ++s;
        continue;
      }
    }
    if (*p != *s) return false;
    ++p;
    ++s;
  }
  return *s == 0;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& split_keywords() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> k = {
      {"train", {"train", "training"}},
      {"validation", {"validation", "valid", "dev", "val"}},
      {"test", {"test", "testing", "eval", "evaluation"}},
  };
  return k;
}

}  // namespace

bool is_data_file(const std::string& path) {
  static const std::vector<std::string> exts = {".parquet", ".jsonl", ".json", ".ndjson",
                                                ".csv",     ".tsv",   ".txt",  ".arrow"};
  std::string p = path;
  std::transform(p.begin(), p.end(), p.begin(), ::tolower);
  return std::any_of(exts.begin(), exts.end(),
                     [&](const std::string& e) { return p.ends_with(e); });
}

namespace {
bool is_data_ext(const std::string& path) { return is_data_file(path); }

bool hidden(const std::string& path) {
  for (const auto& part : fs::path(path)) {
    std::string s = part.string();
    if (s.starts_with(".") || s.starts_with("__")) return true;
  }
  return false;
}

std::vector<std::string> match_all(const std::vector<std::string>& files,
                                   const std::string& pattern, bool skip_hidden) {
  std::vector<std::string> out;
  for (const auto& f : files)
    if ((!skip_hidden || !hidden(f)) && glob_match(pattern, f)) out.push_back(f);
  return out;
}

std::string join_path(const std::string& base, const std::string& pattern) {
  if (base.empty() || base == ".") return pattern;
  std::string b = base;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b + "/" + pattern;
}

// Keeps files of the most common data format (the builder `datasets` would pick).
void keep_main_format(SplitFiles& splits) {
  std::map<std::string, int> count;
  auto ext_of = [](const std::string& f) {
    std::string e = fs::path(f).extension().string();
    std::transform(e.begin(), e.end(), e.begin(), ::tolower);
    if (e == ".jsonl" || e == ".ndjson") e = ".json";
    return e;
  };
  for (auto& [s, fs_] : splits)
    for (auto& f : fs_) ++count[ext_of(f)];
  if (count.size() <= 1) return;
  std::string best = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) {
                       return a.second < b.second;
                     })->first;
  for (auto& [s, fs_] : splits)
    fs_.erase(std::remove_if(fs_.begin(), fs_.end(), [&](auto& f) { return ext_of(f) != best; }),
              fs_.end());
}

// The conventional layouts of `datasets` (data_files.py), relative to `base`.
SplitFiles default_patterns(const std::vector<std::string>& files, const std::string& base) {
  std::vector<std::string> data;
  for (const auto& f : files)
    if (is_data_ext(f) && !hidden(f) && (base.empty() || f.starts_with(base + "/")))
      data.push_back(f);
  SplitFiles out;
  // 1. data/<split>-NNNNN-of-NNNNN*.* (any split name)
  static const std::regex sharded(
      R"(^([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)-[0-9]{5}-of-[0-9]{5}[^/]*\.[^/]*$)");
  std::string prefix = join_path(base, "data/");
  std::map<std::string, std::vector<std::string>> found;
  std::vector<std::string> order;
  for (const auto& f : data) {
    if (!f.starts_with(prefix)) continue;
    std::string name = f.substr(prefix.size());
    std::smatch m;
    if (std::regex_match(name, m, sharded)) {
      if (!found.count(m[1])) order.push_back(m[1]);
      found[m[1]].push_back(f);
    }
  }
  if (!found.empty()) {
    for (const auto& [split, kw] : split_keywords())
      if (found.count(split)) out.emplace_back(split, found[split]);
    for (const auto& s : order)
      if (std::none_of(out.begin(), out.end(), [&](auto& p) { return p.first == s; }))
        out.emplace_back(s, found[s]);
  } else {
    // 2. keyword as a folder name, 3. keyword in the file name, 4. everything is train.
    const char* sep = "[-._ 0-9]";
    std::vector<std::vector<std::string>> families = {
        {"**/{k}/**", std::string("**/*") + sep + "{k}" + sep + "*/**"},
        {std::string("**/{k}") + sep + "*", std::string("**/*") + sep + "{k}" + sep + "*"},
    };
    for (const auto& fam : families) {
      for (const auto& [split, kws] : split_keywords()) {
        std::set<std::string> hit;
        for (const auto& k : kws)
          for (std::string pat : fam) {
            pat.replace(pat.find("{k}"), 3, k);
            for (const auto& f : match_all(data, join_path(base, pat), true)) hit.insert(f);
          }
        if (!hit.empty()) out.emplace_back(split, std::vector<std::string>(hit.begin(), hit.end()));
      }
      if (!out.empty()) break;
    }
    if (out.empty() && !data.empty()) out.emplace_back("train", data);
  }
  for (auto& [s, v] : out) std::sort(v.begin(), v.end());
  keep_main_format(out);
  return out;
}

std::vector<std::string> as_patterns(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n.IsScalar())
    out.push_back(n.as<std::string>());
  else if (n.IsSequence())
    for (const auto& e : n)
      if (e.IsScalar()) out.push_back(e.as<std::string>());
  return out;
}

SplitFiles patterns_to_files(
    const std::vector<std::string>& files,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& pats,
    const std::string& base) {
  SplitFiles out;
  for (const auto& [split, ps] : pats) {
    std::set<std::string> hit;
    for (const auto& p : ps) {
      std::string full = join_path(base, p);
      for (const auto& f : match_all(files, full, false)) hit.insert(f);
    }
    out.emplace_back(split, std::vector<std::string>(hit.begin(), hit.end()));
  }
  return out;
}

// data_files in any of the forms `datasets` accepts, as split -> patterns.
std::vector<std::pair<std::string, std::vector<std::string>>> data_files_patterns(
    const YAML::Node& n) {
  auto scalar = [](const YAML::Node& x, const std::string& dflt) {
    return x && x.IsScalar() ? x.as<std::string>() : dflt;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  if (n.IsScalar()) {
    out.emplace_back("train", as_patterns(n));
  } else if (n.IsSequence()) {
    bool split_items = n.size() > 0 && n[0].IsMap();
    if (!split_items) {
      out.emplace_back("train", as_patterns(n));
    } else {
      for (const auto& item : n) {
        if (!item.IsMap() || !item["path"]) continue;
        std::string split = scalar(item["split"], "train");
        out.emplace_back(split, as_patterns(item["path"]));
      }
    }
  } else if (n.IsMap()) {
    for (const auto& kv : n)
      if (kv.first.IsScalar()) out.emplace_back(kv.first.as<std::string>(), as_patterns(kv.second));
  }
  return out;
}

YAML::Node json_to_yaml(const nlohmann::ordered_json& j) {
  return YAML::Load(j.dump());  // JSON is YAML
}

std::string front_matter(const std::string& readme) {
  if (!readme.starts_with("---")) return {};
  size_t start = readme.find('\n');
  if (start == std::string::npos) return {};
  size_t end = readme.find("\n---", start);
  if (end == std::string::npos) return {};
  return readme.substr(start + 1, end - start);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& path) {
  return match_at(pattern.c_str(), path.c_str());
}

ResolvedConfig resolve_data_files(const std::vector<std::string>& repo_files,
                                  const std::string& readme,
                                  const std::optional<std::string>& config,
                                  const nlohmann::ordered_json& data_files) {
  ResolvedConfig rc;
  // dataset_kwargs.data_files wins, as it does in load_dataset.
  if (!data_files.is_null()) {
    rc.config = config.value_or("default");
    rc.configs = {rc.config};
    auto pats = data_files_patterns(json_to_yaml(data_files));
    rc.patterns = pats;
    rc.splits = patterns_to_files(repo_files, pats, "");
    return rc;
  }
  YAML::Node meta;
  std::string fm = front_matter(readme);
  if (!fm.empty()) {
    try {
      meta = YAML::Load(fm);
    } catch (const YAML::Exception& e) {
      spdlog::warn("ignoring the README's YAML header: {}", e.what());
    }
  }
  if (meta && meta.IsMap() && meta["configs"] && meta["configs"].IsSequence()) {
    YAML::Node chosen;
    bool found = false;  // a default-constructed Node is "defined"
    std::string default_name;
    for (const auto& c : meta["configs"]) {
      if (!c.IsMap() || !c["config_name"] || !c["config_name"].IsScalar()) continue;
      std::string name = c["config_name"].as<std::string>();
      rc.configs.push_back(name);
      if (c["default"] && c["default"].IsScalar() && c["default"].as<bool>(false))
        default_name = name;
      if (config && *config == name) {
        chosen.reset(c);
        found = true;
      }
    }
    if (!config) {
      std::string want =
          !default_name.empty()    ? default_name
          : rc.configs.size() == 1 ? rc.configs[0]
          : std::find(rc.configs.begin(), rc.configs.end(), "default") != rc.configs.end()
              ? "default"
              : "";
      if (want.empty())
        throw UserError("the dataset has several configs and no dataset_name was given", {},
                        "one of: " + join(rc.configs));
      for (const auto& c : meta["configs"])
        if (c.IsMap() && c["config_name"] && c["config_name"].IsScalar() &&
            c["config_name"].as<std::string>() == want) {
          chosen.reset(c);
          found = true;
        }
    }
    if (found) {
      // Const access only: a non-const operator[] would insert null keys.
      const YAML::Node& ch = chosen;
      rc.config = ch["config_name"].as<std::string>();
      std::string data_dir =
          ch["data_dir"] && ch["data_dir"].IsScalar() ? ch["data_dir"].as<std::string>() : "";
      if (ch["data_files"] && !ch["data_files"].IsNull()) {
        auto pats = data_files_patterns(ch["data_files"]);
        for (auto& [sp, ps] : pats) {
          std::vector<std::string> full;
          for (auto& p : ps) full.push_back(join_path(data_dir, p));
          rc.patterns.emplace_back(sp, full);
        }
        rc.splits = patterns_to_files(repo_files, pats, data_dir);
      } else {
        rc.splits = default_patterns(repo_files, data_dir);
      }
      return rc;
    }
    throw UserError("no config '" + config.value_or("") + "' in the dataset", {},
                    "one of: " + join(rc.configs));
  }
  // No configs section: the single "default" config, or a `<config>/` folder by convention.
  std::set<std::string> dirs;
  for (const auto& f : repo_files) {
    size_t slash = f.find('/');
    if (slash != std::string::npos && is_data_ext(f) && !hidden(f)) dirs.insert(f.substr(0, slash));
  }
  if (config && *config != "default") {
    if (!dirs.count(*config)) {
      std::vector<std::string> have = {"default"};
      for (const auto& d : dirs)
        if (d != "data") have.push_back(d);
      throw UserError("no config '" + *config + "' in the dataset", {}, "one of: " + join(have));
    }
    rc.config = *config;
    rc.splits = default_patterns(repo_files, *config);
    rc.configs.assign(dirs.begin(), dirs.end());
    return rc;
  }
  rc.config = "default";
  rc.configs = {"default"};
  rc.splits = default_patterns(repo_files, dirs.count("default") ? "default" : "");
  if (rc.splits.empty() && dirs.count("default") == 0) rc.splits = default_patterns(repo_files, "");
  return rc;
}

}  // namespace hub

namespace {

std::string hub_read_text(const fs::path& p) {
  return read_input_file(p, "Hub cache file", "a file of the Hub cache");
}

bool hub_has_script(const std::vector<std::string>& files, const std::string& id) {
  std::string base = id.substr(id.find('/') == std::string::npos ? 0 : id.find('/') + 1);
  return std::find(files.begin(), files.end(), base + ".py") != files.end();
}

}  // namespace

std::vector<Doc> read_data_file(const fs::path& file) { return read_split({file}, {}); }

HubDataSource::HubDataSource(std::shared_ptr<hub::HubClient> client)
    : client_(client
                  ? std::move(client)
                  : std::make_shared<hub::HubClient>(hub::HubConfig::from_env(/*datasets=*/true))) {
}

std::string HubDataSource::describe() const {
  return "Hugging Face Hub (" + client_->config().endpoint +
         (client_->config().offline ? ", offline" : "") + ", cache " +
         client_->config().cache_dir.string() + ")";
}

bool HubDataSource::is_hub_id(const DatasetRef& ref) {
  static const std::vector<std::string> builders = {"json", "csv",   "parquet",
                                                    "text", "arrow", "pandas"};
  if (ref.path.empty() || std::find(builders.begin(), builders.end(), ref.path) != builders.end())
    return false;
  if (ref.path.front() == '/' || ref.path.front() == '.') return false;
  if (std::count(ref.path.begin(), ref.path.end(), '/') > 1) return false;
  if (!ref.base_dir.empty() && fs::exists(ref.base_dir / ref.path)) return false;
  return !fs::exists(ref.path);
}

HubDataSource::Resolved HubDataSource::resolve(const DatasetRef& ref) {
  std::string revision = "main";
  nlohmann::ordered_json data_files = nullptr;
  if (ref.kwargs.is_object()) {
    if (ref.kwargs.contains("revision") && ref.kwargs["revision"].is_string())
      revision = ref.kwargs["revision"].get<std::string>();
    if (ref.kwargs.contains("data_files")) data_files = ref.kwargs["data_files"];
  }
  std::string key =
      ref.path + "\n" + revision + "\n" + ref.name.value_or("\x01") + "\n" + data_files.dump();
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;

  Resolved r;
  r.repo = hub::RepoRef{hub::RepoType::kDataset, ref.path, revision};
  auto info = client_->repo_info(r.repo);
  r.commit = info.commit;
  std::string readme;
  if (std::find(info.files.begin(), info.files.end(), "README.md") != info.files.end()) {
    auto p = client_->config().offline
                 ? std::optional<fs::path>(client_->snapshot_dir(r.repo, r.commit) / "README.md")
                 : client_->try_download(r.repo, r.commit, "README.md");
    if (p && fs::exists(*p)) readme = hub_read_text(*p);
  }
  bool any_data = std::any_of(info.files.begin(), info.files.end(),
                              [](const std::string& f) { return hub::is_data_file(f); });
  if (any_data || !data_files.is_null() || !hub_has_script(info.files, ref.path)) {
    try {
      r.config = hub::resolve_data_files(info.files, readme, ref.name, data_files);
    } catch (const YAML::Exception& e) {
      throw UserError(std::string("cannot use the README.md YAML header: ") + e.what(),
                      {ref.path + "/README.md", 0, 0, ""});
    }
  } else {
    // A loading-script dataset: the Hub's parquet conversion lives on refs/convert/parquet.
    r.repo.revision = "refs/convert/parquet";
    auto pinfo = client_->repo_info(r.repo);
    r.commit = pinfo.commit;
    r.config = hub::resolve_data_files(pinfo.files, "", ref.name.value_or("default"), nullptr);
    // Split folders (<config>/<split>/NNNN.parquet, partial-<split>) name the splits directly.
    std::string cfg = r.config.config;
    hub::SplitFiles by_dir;
    for (const auto& f : pinfo.files) {
      if (!f.starts_with(cfg + "/") || !f.ends_with(".parquet")) continue;
      std::string rest = f.substr(cfg.size() + 1);
      size_t slash = rest.find('/');
      if (slash == std::string::npos) continue;
      std::string split = rest.substr(0, slash);
      if (split.starts_with("partial-")) split = split.substr(8);
      auto it =
          std::find_if(by_dir.begin(), by_dir.end(), [&](auto& p) { return p.first == split; });
      if (it == by_dir.end())
        by_dir.emplace_back(split, std::vector<std::string>{f});
      else
        it->second.push_back(f);
    }
    if (!by_dir.empty()) {
      for (auto& [s, v] : by_dir) std::sort(v.begin(), v.end());
      r.config.splits = by_dir;
    }
  }
  memo_[key] = r;
  return r;
}

UserError HubDataSource::no_files(const Resolved& r, const std::vector<std::string>& splits) const {
  std::string what;
  for (const auto& s : splits) {
    std::string pats;
    for (const auto& [ps, v] : r.config.patterns)
      if (ps == s)
        for (const auto& p : v) pats += (pats.empty() ? "" : ", ") + p;
    what += (what.empty() ? "" : "; ") + std::string("split '") + s + "'" +
            (pats.empty() ? std::string() : " (" + pats + ")");
  }
  if (client_->config().offline)
    return UserError(
        "offline: dataset '" + r.repo.id + "' config '" + r.config.config + "' at revision '" +
            r.repo.revision + "' (" + r.commit + ") is missing from the cache " +
            client_->config().cache_dir.string() + ": " + what,
        {}, "run `lm-eval download` where the Hub is reachable, or unset HF_HUB_OFFLINE");
  return UserError("dataset '" + r.repo.id + "' config '" + r.config.config +
                   "': no data files match " + what);
}

std::vector<fs::path> HubDataSource::local_files(const Resolved& r,
                                                 const std::vector<std::string>& files) {
  std::vector<fs::path> out;
  if (client_->config().offline) {
    std::vector<std::string> missing;
    for (const auto& f : files) {
      fs::path p = client_->snapshot_dir(r.repo, r.commit) / f;
      if (fs::exists(p))
        out.push_back(p);
      else
        missing.push_back(f);
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      throw DataUnavailable(
          "offline: dataset '" + r.repo.id + "' at revision '" + r.repo.revision + "' (" +
              r.commit + ") is missing from the cache " + client_->config().cache_dir.string() +
              ": " + list,
          {}, "run `lm-eval download` where the Hub is reachable, or unset HF_HUB_OFFLINE");
    }
    return out;
  }
  for (const auto& f : files) out.push_back(client_->download(r.repo, r.commit, f));
  return out;
}

std::optional<std::vector<Doc>> HubDataSource::load_split(const DatasetRef& ref,
                                                          const std::string& split) {
  if (!is_hub_id(ref)) return std::nullopt;
  Resolved r = resolve(ref);
  auto it = std::find_if(r.config.splits.begin(), r.config.splits.end(),
                         [&](auto& p) { return p.first == split; });
  if (it == r.config.splits.end()) return std::nullopt;
  if (it->second.empty()) throw no_files(r, {split});
  SplitReadOptions opts;
  opts.kwargs = ref.kwargs;
  return read_split(local_files(r, it->second), opts);
}

std::vector<fs::path> HubDataSource::fetch(const DatasetRef& ref,
                                           const std::vector<std::string>& splits) {
  Resolved r = resolve(ref);
  std::vector<std::string> files;
  for (const auto& [s, v] : r.config.splits) {
    if (!splits.empty() && std::find(splits.begin(), splits.end(), s) == splits.end()) continue;
    files.insert(files.end(), v.begin(), v.end());
  }
  std::vector<std::string> empty;
  for (const auto& [s, v] : r.config.splits)
    if (v.empty() && (splits.empty() || std::find(splits.begin(), splits.end(), s) != splits.end()))
      empty.push_back(s);
  if (!empty.empty()) throw no_files(r, empty);
  for (const auto& s : splits) {
    if (std::none_of(r.config.splits.begin(), r.config.splits.end(),
                     [&](auto& p) { return p.first == s; })) {
      std::string have;
      for (const auto& [n, v] : r.config.splits) have += (have.empty() ? "" : ", ") + n;
      throw UserError(
          "dataset '" + ref.path + "' config '" + r.config.config + "' has no split '" + s + "'",
          {}, "one of: " + have);
    }
  }
  return local_files(r, files);
}

}  // namespace lmeval

// Task index: a sorted walk of YAML files, with an mtime-keyed cache so `ls`/`run` start fast.
#include "lmeval/tasks/task_index.hpp"
#include "lmeval/tasks/task_library_download.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/tasks/task_yaml.hpp"

namespace lmeval {

namespace fs = std::filesystem;

bool fnmatch(const std::string& name, const std::string& pat) {
  // Iterative glob with backtracking on '*'; [seq] and [!seq] classes.
  size_t n = 0, p = 0, star_p = std::string::npos, star_n = 0;
  auto class_match = [&](size_t& pi, char c) -> int {  // -1 malformed, 0 no, 1 yes
    size_t i = pi + 1;
    bool negate = false;
    if (i < pat.size() && pat[i] == '!') {
      negate = true;
      ++i;
    }
    bool matched = false;
    bool first = true;
    while (i < pat.size() && (first || pat[i] != ']')) {
      first = false;
      char lo = pat[i];
      if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
        if (c >= lo && c <= pat[i + 2]) matched = true;
        i += 3;
      } else {
        if (c == lo) matched = true;
        ++i;
      }
    }
    if (i >= pat.size()) return -1;
    pi = i + 1;
    return matched != negate ? 1 : 0;
  };
  while (n < name.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star_p = p++;
      star_n = n;
      continue;
    }
    if (p < pat.size() && pat[p] == '?') {
      ++p;
      ++n;
      continue;
    }
    if (p < pat.size() && pat[p] == '[') {
      size_t pi = p;
      int r = class_match(pi, name[n]);
      if (r == 1) {
        p = pi;
        ++n;
        continue;
      }
      if (r == -1 && name[n] == '[') {  // a lone '[' matches itself
        ++p;
        ++n;
        continue;
      }
    } else if (p < pat.size() && pat[p] == name[n]) {
      ++p;
      ++n;
      continue;
    }
    if (star_p != std::string::npos) {
      p = star_p + 1;
      n = ++star_n;
      continue;
    }
    return false;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

fs::path builtin_tasks_dir() {
  if (const char* env = std::getenv("LMEVAL_TASKS_DIR"); env && *env) return env;
  char buf[4096];
  ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len > 0) {
    fs::path exe(std::string(buf, static_cast<size_t>(len)));
    for (fs::path cand : {exe.parent_path().parent_path() / "tasks",
                          exe.parent_path().parent_path() / "share/lm-eval/tasks"})
      if (fs::is_directory(cand)) return cand;
  }
#ifdef LMEVAL_SOURCE_DIR
  return fs::path(LMEVAL_SOURCE_DIR) / "tasks";
#else
  return "tasks";
#endif
}

namespace {

struct FileFacts {
  std::string path;
  std::string kind;  // "task", "group", "" (skipped)
  std::string name;
  std::string output_type;
  std::vector<std::string> tags;
  std::string error;
};

FileFacts scan_file(const fs::path& p) {
  FileFacts f;
  f.path = p.string();
  try {
    TaskYaml y = load_task_yaml(p);
    const auto& v = y.value;
    // TaskIndex._kind_of: a `class` key (the reference's PY_TASK) is checked before `group`
    // (scrolls' class tasks also say `group: scrolls`, which the factory drops).
    const bool py_task = v.contains("class") && v.contains("task") && v["task"].is_string();
    if (!py_task && v.contains("group") && v["group"].is_string()) {
      f.kind = "group";
      f.name = v["group"].get<std::string>();
    } else if (v.contains("task") && v["task"].is_string()) {
      // A Python-class task (`class: !function ...`, the reference's PY_TASK) is a task too.
      // (group: its factory pops it, as make_task_config ignores it.)
      f.kind = "task";
      f.name = v["task"].get<std::string>();
      if (v.contains("output_type") && v["output_type"].is_string())
        f.output_type = v["output_type"].get<std::string>();
      if (v.contains("tag")) {
        if (v["tag"].is_string())
          f.tags.push_back(v["tag"].get<std::string>());
        else if (v["tag"].is_array())
          for (const auto& t : v["tag"])
            if (t.is_string()) f.tags.push_back(t.get<std::string>());
      }
    } else if (v.contains("task") && (v["task"].is_number() || v["task"].is_boolean())) {
      // The reference registers the name as it is and its index then fails sorting a number
      // among the names (TypeError: '<' not supported between 'int' and 'str').
      throw UserError("task name " + v["task"].dump() + " is not a string", y.where("task"),
                      "task: <name> (quote a name that YAML reads as a number)");
    }
  } catch (const std::exception& e) {
    f.error = e.what();
  }
  return f;
}

std::vector<fs::path> yaml_files(const fs::path& root) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(root)) {
    out.push_back(root);
    return out;
  }
  if (!fs::is_directory(root)) return out;
  // A folder symlink back up the tree (a loop) is not entered: following it made the walk fail
  // with "Too many levels of symbolic links".
  std::error_code ec;
  const auto walk_error = [&](const std::error_code& e, const fs::path& where) {
    return UserError("cannot read the task folder " + where.string() + ": " + e.message(),
                     {where.string(), 0, 0, ""}, "a readable folder tree");
  };
  auto it =
      fs::recursive_directory_iterator(root, fs::directory_options::follow_directory_symlink, ec);
  if (ec) throw walk_error(ec, root);
  fs::path last = root;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw walk_error(ec, last);
    const fs::path p = it->path();
    last = p;
    std::string fname = p.filename().string();
    std::error_code kind_ec;
    const bool is_dir = it->is_directory(kind_ec);
    if (is_dir && (fname == "__pycache__" || fname == ".ipynb_checkpoints")) {
      it.disable_recursion_pending();
      continue;
    }
    if (is_dir) {
      if (it->is_symlink(kind_ec)) {
        std::error_code c1, c2;
        const fs::path real = fs::canonical(p, c1), here = fs::canonical(p.parent_path(), c2);
        const auto rel = here.lexically_relative(real);
        if (c1 || c2 || (!rel.empty() && *rel.begin() != "..")) it.disable_recursion_pending();
      }
      continue;
    }
    if (it->is_regular_file(kind_ec) && p.extension() == ".yaml") out.push_back(p);
  }
  if (ec) throw walk_error(ec, last);
  // POSIX paths are their generic form: compare them in place (no string copies).
  std::sort(out.begin(), out.end(),
            [](const fs::path& a, const fs::path& b) { return a.native() < b.native(); });
  return out;
}

// Each file's facts are an array [path, kind, name, output_type, [tags], error]: reading ~14,000
// of them as arrays allocates a fraction of what objects (a std::map each) did. Version 1 had
// objects.
constexpr int kIndexCacheVersion = 5;  // 3: Python-class tasks indexed; 4: numeric names;
                                       // 5: non-string YAML keys read (issue 31)

}  // namespace

fs::path lmeval_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "lm-eval";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "lm-eval";
  return {};
}

TaskIndex TaskIndex::build(const std::vector<fs::path>& roots) {
  TaskIndex idx;
  idx.roots_ = roots;
  bool use_cache = std::getenv("LMEVAL_NO_INDEX_CACHE") == nullptr;
  // The cache holds each file's facts keyed by path+size+mtime; a file whose stamp changed
  // (or an include it uses changed: stamps of all YAMLs under the root are compared) is rescanned.
  for (const auto& root : roots) {
    auto files = yaml_files(root);
    std::string stamp;
    for (const auto& f : files) {
      // One stat per file (size and mtime in nanoseconds) for the ~10,000 YAMLs of a big root.
      struct stat st {};
      long long size = -1, mtime = 0;
      if (::stat(f.c_str(), &st) == 0) {
        size = static_cast<long long>(st.st_size);
        mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
      }
      stamp += f.generic_string() + "|" + std::to_string(size) + "|" + std::to_string(mtime) + "\n";
    }
    std::vector<FileFacts> facts;
    fs::path cache_file;
    bool loaded = false;
    if (use_cache && !lmeval_cache_dir().empty()) {
      cache_file =
          lmeval_cache_dir() /
          ("task_index_" + sha256_hex(fs::absolute(root).string()).substr(0, 16) + ".json");
      std::ifstream in(cache_file, std::ios::binary | std::ios::ate);
      if (in) {
        try {
          // Read whole in one call, then parsed from memory (stream input goes a character at a
          // time).
          std::string text(static_cast<size_t>(in.tellg()), '\0');
          in.seekg(0);
          in.read(text.data(), static_cast<std::streamsize>(text.size()));
          nlohmann::json j = nlohmann::json::parse(text);
          if (j.value("version", 0) == kIndexCacheVersion &&
              j.value("stamp", "") == sha256_hex(stamp)) {
            const auto& files = j["files"];
            facts.reserve(files.size());
            for (auto& e : files) {
              FileFacts f;
              f.path = e.at(0).get_ref<const std::string&>();
              f.kind = e.at(1).get_ref<const std::string&>();
              f.name = e.at(2).get_ref<const std::string&>();
              f.output_type = e.at(3).get_ref<const std::string&>();
              for (const auto& t : e.at(4)) f.tags.push_back(t.get_ref<const std::string&>());
              f.error = e.at(5).get_ref<const std::string&>();
              facts.push_back(std::move(f));
            }
            loaded = true;
          }
        } catch (...) {
          facts.clear();
        }
      }
    }
    if (!loaded) {
      for (const auto& f : files) facts.push_back(scan_file(f));
      if (!cache_file.empty()) {
        nlohmann::json j;
        j["version"] = kIndexCacheVersion;
        j["stamp"] = sha256_hex(stamp);
        j["files"] = nlohmann::json::array();
        for (const auto& f : facts)
          j["files"].push_back(
              nlohmann::json::array({f.path, f.kind, f.name, f.output_type, f.tags, f.error}));
        std::error_code ec;
        fs::create_directories(cache_file.parent_path(), ec);
        fs::path tmp = cache_file;
        tmp += ".tmp" + std::to_string(getpid());
        std::ofstream out(tmp);
        if (out) {
          out << j.dump();
          out.close();
          fs::rename(tmp, cache_file, ec);
        }
      }
    }
    // Within a root the first file wins; a later root overrides.
    std::map<std::string, IndexEntry> local;
    // Moved, not copied: ~14,000 entries (an fs::path each) for the reference's task folder.
    for (auto& f : facts) {
      if (!f.error.empty()) {
        idx.skipped_.emplace_back(f.path, f.error);
        continue;
      }
      if (f.kind.empty()) continue;
      if (local.count(f.name) && local[f.name].kind != IndexKind::Tag) continue;
      IndexEntry e;
      e.name = f.name;
      e.kind = f.kind == "group" ? IndexKind::Group : IndexKind::Task;
      e.yaml = std::move(f.path);
      e.output_type = std::move(f.output_type);
      local[f.name] = std::move(e);
      for (const auto& t : f.tags) {
        auto it = local.find(t);
        if (it == local.end()) {
          IndexEntry te;
          te.name = t;
          te.kind = IndexKind::Tag;
          it = local.emplace(t, std::move(te)).first;
        }
        it->second.tag_tasks.insert(f.name);
      }
    }
    for (auto& [k, v] : local) {
      auto it = idx.entries_.find(k);
      if (it != idx.entries_.end() && it->second.kind == IndexKind::Tag &&
          v.kind == IndexKind::Tag) {
        it->second.tag_tasks.insert(v.tag_tasks.begin(), v.tag_tasks.end());
      } else {
        idx.entries_[k] = std::move(v);
      }
    }
  }
  return idx;
}

const IndexEntry* TaskIndex::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> TaskIndex::all_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_) out.push_back(k);
  return out;
}

std::vector<std::string> TaskIndex::names_of(IndexKind kind) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_)
    if (v.kind == kind) out.push_back(k);
  return out;
}

std::vector<std::string> TaskIndex::match(const std::string& pattern) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_)
    if (fnmatch(k, pattern)) out.push_back(k);
  return out;
}

}  // namespace lmeval

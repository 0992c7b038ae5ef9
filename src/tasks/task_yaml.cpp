// Include resolution for task YAMLs.
#include "lmeval/tasks/task_yaml.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/function_source.hpp"
#include "lmeval/tasks/task_index.hpp"

namespace lmeval {

namespace fs = std::filesystem;

SourceLocation TaskYaml::where(const std::string& key) const {
  auto it = origin.find(key);
  if (it != origin.end()) return it->second;
  return {path.string(), 0, 0, key};
}

static TaskYaml load_rec(const fs::path& path, std::set<std::string>& seen) {
  std::error_code ec;
  fs::path canon = fs::weakly_canonical(path, ec);
  std::string key = (ec ? path : canon).string();
  if (seen.count(key))
    throw UserError("Include cycle at " + path.string(), {path.string(), 0, 0, "include"},
                    "includes that do not repeat a file");
  seen.insert(key);
  YamlFile file = load_yaml(path);
  bind_function_sources(file.value, path, builtin_tasks_dir());
  if (!file.value.is_object())
    throw UserError("Expected YAML dict from " + path.string(), {path.string(), 1, 1, ""},
                    "a mapping of task fields");
  TaskYaml out;
  out.path = path;
  if (file.value.contains("include")) {
    Json inc = file.value["include"];
    std::vector<std::string> paths;
    if (inc.is_string())
      paths.push_back(inc.get<std::string>());
    else if (inc.is_array()) {
      for (const auto& p : inc) {
        if (!p.is_string())
          throw UserError("include entries must be strings", file.where("/include", "include"),
                          "file paths");
        paths.push_back(p.get<std::string>());
      }
    } else {
      throw UserError("include must be a string or a list", file.where("/include", "include"),
                      "file paths");
    }
    for (const auto& p : paths) {
      fs::path ip = fs::path(p).is_absolute() ? fs::path(p) : path.parent_path() / p;
      if (!fs::exists(ip))
        throw UserError("included file not found: " + p, file.where("/include", "include"),
                        "a path relative to " + path.parent_path().string());
      TaskYaml sub = load_rec(ip, seen);
      sub.value.erase("task_list");
      for (auto it = sub.value.begin(); it != sub.value.end(); ++it) {
        out.value[it.key()] = it.value();
        out.origin[it.key()] = sub.where(it.key());
      }
    }
  }
  for (auto it = file.value.begin(); it != file.value.end(); ++it) {
    if (it.key() == "include") continue;
    out.value[it.key()] = it.value();
    out.origin[it.key()] = file.where("/" + it.key(), it.key());
  }
  return out;
}

TaskYaml load_task_yaml(const fs::path& path) {
  std::set<std::string> seen;
  return load_rec(path, seen);
}

}  // namespace lmeval

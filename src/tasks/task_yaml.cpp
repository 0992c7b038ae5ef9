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

SourceLocation TaskYaml::where_at(const std::string& pointer, const std::string& field) const {
  for (std::string p = pointer; !p.empty(); p = p.substr(0, p.rfind('/'))) {
    auto it = marks.find(p);
    if (it != marks.end())  // a mark's own field is a prefix (a group member's "task[1].")
      return {it->second.file, it->second.line, it->second.column, it->second.field + field};
    if (p.rfind('/') == 0) {  // a top-level key: where its value came from
      SourceLocation top = where(p.substr(1));
      top.field = field;
      return top;
    }
  }
  return {path.string(), 0, 0, field};
}

void TaskYaml::forget_marks(const std::string& key) {
  const std::string top = "/" + key;
  for (auto it = marks.lower_bound(top); it != marks.end() && it->first.starts_with(top);)
    it = it->first.size() == top.size() || it->first[top.size()] == '/' ? marks.erase(it)
                                                                        : std::next(it);
}

// The top-level key of a JSON pointer ("/a/0/b" -> "a").
static std::string top_key(const std::string& pointer) {
  size_t end = pointer.find('/', 1);
  return pointer.substr(1, end == std::string::npos ? std::string::npos : end - 1);
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
      // The reference opens it and fails with IsADirectoryError.
      if (fs::is_directory(ip))
        throw UserError("included path " + p + " is a folder", file.where("/include", "include"),
                        "a YAML file, relative to " + path.parent_path().string());
      TaskYaml sub = load_rec(ip, seen);
      sub.value.erase("task_list");
      for (auto it = sub.value.begin(); it != sub.value.end(); ++it) {
        out.value[it.key()] = it.value();
        out.origin[it.key()] = sub.where(it.key());
        out.forget_marks(it.key());
      }
      for (const auto& [pointer, loc] : sub.marks)
        if (sub.value.contains(top_key(pointer))) out.marks[pointer] = loc;
    }
  }
  for (auto it = file.value.begin(); it != file.value.end(); ++it) {
    if (it.key() == "include") continue;
    out.value[it.key()] = it.value();
    out.origin[it.key()] = file.where("/" + it.key(), it.key());
    out.forget_marks(it.key());
  }
  for (const auto& [pointer, pos] : file.marks)
    if (pointer.size() > 1 && top_key(pointer) != "include")
      out.marks[pointer] = {path.string(), pos.first, pos.second, ""};
  return out;
}

TaskYaml load_task_yaml(const fs::path& path) {
  std::set<std::string> seen;
  return load_rec(path, seen);
}

}  // namespace lmeval

// The index of task, group and tag names over the built-in tasks/ folder and --include_path (spec
// §3.8).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lmeval {

enum class IndexKind { Task, Group, Tag };

struct IndexEntry {
  std::string name;
  IndexKind kind = IndexKind::Task;
  std::filesystem::path yaml;       // empty for tags
  std::string output_type;          // tasks: the YAML's output_type if written (for `ls`)
  std::set<std::string> tag_tasks;  // tags: member task names
};

class TaskIndex {
 public:
  // Built-in tasks dir first, then include_path (later roots override earlier ones).
  // Uses a cache keyed by file paths, sizes and mtimes under $XDG_CACHE_HOME/lm-eval
  // (or ~/.cache/lm-eval) unless LMEVAL_NO_INDEX_CACHE is set.
  static TaskIndex build(const std::vector<std::filesystem::path>& roots);

  const IndexEntry* find(const std::string& name) const;
  std::vector<std::string> all_names() const;               // sorted
  std::vector<std::string> names_of(IndexKind kind) const;  // sorted
  // fnmatch-style pattern over all names; sorted, de-duplicated.
  std::vector<std::string> match(const std::string& pattern) const;
  // Files that failed to parse while indexing (path, message): `validate` reports them.
  const std::vector<std::pair<std::string, std::string>>& skipped() const { return skipped_; }
  const std::vector<std::filesystem::path>& roots() const { return roots_; }

 private:
  std::map<std::string, IndexEntry> entries_;
  std::vector<std::pair<std::string, std::string>> skipped_;
  std::vector<std::filesystem::path> roots_;
};

// The built-in tasks folder: $LMEVAL_TASKS_DIR, else <exe>/../tasks, <exe>/../share/lm-eval/tasks,
// else the source tree's tasks/.
std::filesystem::path builtin_tasks_dir();

// Python fnmatch.fnmatchcase.
bool fnmatch(const std::string& name, const std::string& pattern);

}  // namespace lmeval

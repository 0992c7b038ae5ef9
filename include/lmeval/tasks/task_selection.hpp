// Resolving --tasks into leaf task configs and groups (spec §2.3.4, §3.3).
#pragma once

#include <string>
#include <vector>

#include "lmeval/tasks/task_config.hpp"
#include "lmeval/tasks/task_index.hpp"

namespace lmeval {

struct GroupNode {
  GroupConfig config;
  std::string name;
  std::vector<std::string> children;  // direct members (task or group names) in member order
  std::vector<std::string> leaves;    // all leaf tasks, depth-first
  std::string version;                // str(metadata.version) or "N/A"
  bool has_aggregation() const { return !config.aggregate_metric_list.empty(); }
  std::string alias() const { return config.alias.value_or(name); }
};

struct TaskSelection {
  std::vector<TaskConfig> tasks;  // leaf tasks in flattening order
  std::vector<GroupNode> groups;  // each requested group, then its nested groups (pre-order)
};

// `requested` as given on the command line (already split on commas). `run_metadata` is
// model_args | --metadata, merged into every task's and group's metadata. Unknown names throw
// UserError("Tasks not found: ..."); with `collect`, problems are appended instead.
// When a name is not found, the message adds why the task files that declare it (or, failing
// that, the first unreadable ones) could not be read, as `validate` lists them.
TaskSelection select_tasks(const TaskIndex& index, const std::vector<std::string>& requested,
                           const Json& run_metadata, std::vector<UserError>* collect = nullptr);

// The index's unreadable files (path, error) that declare one of `names` (`task:`/`group:` or
// the file name); when none does, up to five of all of them.
std::vector<std::pair<std::string, std::string>> unreadable_task_files(
    const TaskIndex& index, const std::vector<std::string>& names);

}  // namespace lmeval

// Task/group YAML files with `include` resolved (spec §3.2), remembering where each key came from.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "lmeval/config/yaml_loader.hpp"

namespace lmeval {

struct TaskYaml {
  Json value = Json::object();                   // merged mapping
  std::filesystem::path path;                    // the file that was asked for
  std::map<std::string, SourceLocation> origin;  // top-level key -> where its value was written

  SourceLocation where(const std::string& key) const;
};

// load_yaml of the reference: include (string or list, relative to the including file) merged
// shallowly in list order, the local keys last; included `task_list` dropped; a file seen twice
// in one load (a cycle or a diamond) throws UserError("Include cycle at <path>").
TaskYaml load_task_yaml(const std::filesystem::path& path);

}  // namespace lmeval

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
  // JSON pointer of a nested value ("/task/1/num_fewshot") -> where it was written, for the
  // values of the file that gave their top-level key. A mark's `field`, if any, prefixes the
  // names where_at gives (a group member's values: "task[1].").
  std::map<std::string, SourceLocation> marks;

  SourceLocation where(const std::string& key) const;
  // Where a nested value was written, named `field` ("dataset_kwargs.data_files.test"); else its
  // nearest located parent's place.
  SourceLocation where_at(const std::string& pointer, const std::string& field) const;
  // Drops the nested places under a top-level key (its value came from elsewhere).
  void forget_marks(const std::string& key);
};

// load_yaml of the reference: include (string or list, relative to the including file) merged
// shallowly in list order, the local keys last; included `task_list` dropped; a file seen twice
// in one load (a cycle or a diamond) throws UserError("Include cycle at <path>").
TaskYaml load_task_yaml(const std::filesystem::path& path);

}  // namespace lmeval

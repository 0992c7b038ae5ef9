// TaskConfig (the reference's schema, spec §3.1) and GroupConfig (§3.3), validated with file:line errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/data/data_source.hpp"
#include "lmeval/tasks/task_yaml.hpp"

namespace lmeval {

// The TaskConfig fields in declaration order (the order of `configs` in results).
const std::vector<std::string>& task_config_fields();
// Extra keys allowed in a task YAML but not part of TaskConfig (removed before building).
const std::vector<std::string>& task_yaml_extra_keys();

struct TaskConfig {
  Json raw = Json::object();  // validated fields only, YAML order
  TaskYaml source;            // for error locations
  std::string config_source;  // metadata.config_source: the YAML path as indexed, or "inline"

  std::string name() const { return raw.value("task", ""); }
  bool has(const std::string& k) const { return raw.contains(k) && !raw[k].is_null(); }
  const Json& get(const std::string& k) const;
  std::string str(const std::string& k, const std::string& def = "") const;
  std::string output_type() const { return str("output_type", "generate_until"); }
  SourceLocation where(const std::string& key) const { return source.where(key); }
};

// Builds a TaskConfig from a merged task mapping (after group overrides): unknown keys throw
// UserError with file:line and a did-you-mean; types are checked; TaskConfig.__post_init__
// normalisation applied (generation_kwargs defaults, until, temperature as float).
// With `collect`, every problem is appended and building goes on where possible.
TaskConfig make_task_config(const TaskYaml& yaml, const Json& merged, std::string config_source,
                            std::vector<UserError>* collect = nullptr);

// The fewshot_config after inheritance from task fields (spec §3.1 step 3), in the
// FewshotConfig field order: sampler, split, process_docs, fewshot_indices, samples,
// doc_to_text, doc_to_choice, doc_to_target, gen_prefix, fewshot_delimiter, target_delimiter.
Json resolved_fewshot_config(const TaskConfig& cfg);

// TaskConfig.to_dict for results `configs`: declaration order, None dropped, functions shown by
// their display name, fewshot_config with all fields (nulls kept).
Json task_config_to_results(const TaskConfig& cfg, std::optional<int> num_fewshot = std::nullopt);

// The dataset a task reads: dataset_path, dataset_name, dataset_kwargs, and the YAML's folder
// (for local paths).
DatasetRef dataset_ref(const TaskConfig& cfg);

struct GroupConfig {
  std::string name;
  std::optional<std::string> alias;
  Json task = Json::array();               // member list as written
  Json aggregate_metric_list = Json::array();  // normalised: [{metric, filter_list|null, aggregation, weight_by_size}]
  Json metadata = Json::object();
  Json overrides = Json::object();          // every other key: pushed into member tasks
  TaskYaml source;
};

GroupConfig make_group_config(const TaskYaml& yaml, const Json& merged,
                              std::vector<UserError>* collect = nullptr);

}  // namespace lmeval

// TaskConfig (the reference's schema, spec §3.1) and GroupConfig (§3.3), validated with file:line
// errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/data/data_source.hpp"
#include "lmeval/tasks/task_yaml.hpp"

namespace lmeval {

// The fields of the reference's TaskConfig dataclass (lm_eval/config/task.py), in its declaration
// order (the order of `configs` in results), then lm-eval's own cluster_key (docs/statistics.md).
enum class TaskField {
  task,
  task_alias,
  tag,
  custom_dataset,
  dataset_path,
  dataset_name,
  dataset_kwargs,
  training_split,
  validation_split,
  test_split,
  fewshot_split,
  process_docs,
  doc_to_text,
  doc_to_target,
  doc_to_image,
  doc_to_audio,
  unsafe_code,
  doc_to_choice,
  process_results,
  use_prompt,
  description,
  target_delimiter,
  fewshot_delimiter,
  fewshot_config,
  num_fewshot,
  metric_list,
  output_type,
  generation_kwargs,
  repeats,
  filter_list,
  should_decontaminate,
  doc_to_decontamination_query,
  gen_prefix,
  metadata,
  cluster_key,
};
// The YAML key of a field.
const std::string& field_name(TaskField field);

// The TaskConfig fields' names in declaration order (without lm-eval's cluster_key).
const std::vector<std::string>& task_config_fields();
// Extra keys allowed in a task YAML but not part of TaskConfig (removed before building).
const std::vector<std::string>& task_yaml_extra_keys();

// A task's validated configuration. Fields are read by TaskField (never by a key string outside
// task_config.cpp); the scalar ones through the typed accessors, which give the dataclass's
// defaults. `raw` keeps the YAML's key order for the results' `configs`.
struct TaskConfig {
  Json raw = Json::object();  // validated fields only, YAML order
  TaskYaml source;            // for error locations
  std::string config_source;  // metadata.config_source: the YAML path as indexed, or "inline"
  // A Python-class task (`class: !function module.Class`): that reference (bound to its module
  // file), the keys given over the YAML file's own (group or --tasks overrides) and the task's
  // metadata; its other keys are the class's to read, so `raw` holds only `task`.
  Json python_class;
  Json python_class_overrides = Json::object();
  Json python_class_metadata = Json::object();

  // The field's value as validated (null when absent).
  const Json& get(TaskField field) const;
  bool has(TaskField field) const { return !get(field).is_null(); }
  // A string field's value, `def` when absent or not a string.
  std::string str(TaskField field, const std::string& def = "") const;
  // Where the field is written (file, line), for errors.
  SourceLocation where(TaskField field) const;
  // Sets a field (the run's settings, applied to a run's own copy).
  void set(TaskField field, Json value);

  std::string name() const { return str(TaskField::task); }
  std::string output_type() const { return str(TaskField::output_type, "generate_until"); }
  std::optional<std::string> task_alias() const;
  std::optional<int> num_fewshot() const;
  int repeats() const;       // 1 when absent
  bool unsafe_code() const;  // false when absent
  std::string fewshot_delimiter() const { return str(TaskField::fewshot_delimiter, "\n\n"); }
  std::string target_delimiter() const { return str(TaskField::target_delimiter, " "); }
  std::optional<std::string> cluster_key() const;

  // By key name: generic code over every field (serialisation) and tests.
  const Json& get(const std::string& key) const;
};

// Builds a TaskConfig from a merged task mapping (after group overrides): unknown keys throw
// UserError with file:line and a did-you-mean; types are checked; TaskConfig.__post_init__
// normalisation applied (generation_kwargs defaults, until, temperature as float).
// With `collect`, every problem is appended and building goes on where possible.
TaskConfig make_task_config(const TaskYaml& yaml, const Json& merged, std::string config_source,
                            std::vector<UserError>* collect = nullptr);

// The reference's FewshotConfig: the fewshot_config after inheritance from the task's fields
// (spec §3.1 step 3). Values as written (functions stay function references); null when unset.
struct FewshotConfig {
  Json sampler = "default";
  Json split;
  Json process_docs;
  Json fewshot_indices;
  Json samples;
  Json doc_to_text;
  Json doc_to_choice;
  Json doc_to_target;
  Json gen_prefix;
  Json fewshot_delimiter = "\n\n";
  Json target_delimiter = " ";
  // In the FewshotConfig field order (results `configs`).
  Json to_json() const;
};
FewshotConfig resolved_fewshot_config(const TaskConfig& cfg);

// TaskConfig.to_dict for results `configs`: declaration order, None dropped, functions shown by
// their display name, fewshot_config with all fields (nulls kept).
Json task_config_to_results(const TaskConfig& cfg, std::optional<int> num_fewshot = std::nullopt);

// The dataset a task reads: dataset_path, dataset_name, dataset_kwargs, and the YAML's folder
// (for local paths).
DatasetRef dataset_ref(const TaskConfig& cfg);

struct GroupConfig {
  std::string name;
  std::optional<std::string> alias;
  Json task = Json::array();  // member list as written
  Json aggregate_metric_list =
      Json::array();  // normalised: [{metric, filter_list|null, aggregation, weight_by_size}]
  Json metadata = Json::object();
  Json overrides = Json::object();  // every other key: pushed into member tasks
  TaskYaml source;
};

GroupConfig make_group_config(const TaskYaml& yaml, const Json& merged,
                              std::vector<UserError>* collect = nullptr);

}  // namespace lmeval

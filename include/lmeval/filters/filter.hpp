// Filters over model responses: the Filter interface, the filter registry and FilterEnsemble.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"

namespace lmeval {

// One step of a pipeline (the reference's lm_eval.api.filter.Filter).
//
// Data model: a response is a JSON value (loglikelihood: [ll, is_greedy]; loglikelihood_rolling:
// a number; generate_until: a string). `resps` has one entry per instance of a task, in instance
// order: at the start of a pipeline the JSON array of that instance's responses (`repeats` long),
// later whatever the previous filter produced. `docs[i]` is instance i's document (same length).
// Python types map to JSON as: str -> string, list/tuple -> array, dict -> object, None -> null.
// Where the reference would raise a Python exception (e.g. take_first of an empty list,
// group_select out of range) apply() throws lmeval::RuntimeError saying what the reference does.
class Filter {
 public:
  virtual ~Filter() = default;
  virtual std::vector<Json> apply(std::vector<Json> resps,
                                  const std::vector<const Json*>& docs) const = 0;
};

// Builds a filter from its YAML kwargs (every key of the filter entry except `function`).
// `where.field` names the filter entry (e.g. "filter_list[1].filter[0]"); unknown or invalid
// kwargs throw UserError naming "<where.field>.<kwarg>".
using FilterFactory =
    std::function<std::unique_ptr<Filter>(const Json& kwargs, const SourceLocation& where)>;

// A whole-task filter function for the `custom` filter's `filter_fn` (the reference passes a
// Python callable; here a C++ function registered by name).
using FilterFunction =
    std::function<std::vector<Json>(std::vector<Json> resps, const std::vector<const Json*>& docs)>;

class FilterRegistry {
 public:
  static FilterRegistry& instance();

  // Registers a filter under the name a YAML `function:` uses. A filter that a task defines in its
  // utils.py and names with `function: !function utils.X` is registered as "<family>/utils.X"
  // (family = the YAML's folder name, as the YAML loader records it) or plainly as "utils.X".
  void add(std::string name, FilterFactory factory);
  void add_function(std::string name, FilterFunction fn);
  bool contains(const std::string& name) const;
  // Throws UserError naming `where.field` + ".function" with the known names and a did-you-mean.
  std::unique_ptr<Filter> create(const std::string& name, const Json& kwargs,
                                 const SourceLocation& where) const;
  // `function:` given as a YAML `!function` reference ({"!function": name, "dir": family}).
  std::unique_ptr<Filter> create_from_ref(const Json& ref, const Json& kwargs,
                                          const SourceLocation& where) const;
  const FilterFunction* find_function(const std::string& name, const std::string& family) const;
  std::vector<std::string> names() const;  // sorted

 private:
  mutable std::shared_mutex mu_;  // registration may race with lookups from worker threads
  std::map<std::string, FilterFactory> factories_;
  std::map<std::string, FilterFunction> functions_;
};

// Builds a filter whose code is Python (a `!function` bound to no C++ port: "python_module" in
// `ref`): a filter class instantiated with `kwargs` (is_class) or a `custom` filter's filter_fn.
// Set by the tasks library, which runs Python task code; unset, such filters are refused.
using PythonFilterFactory = std::function<std::unique_ptr<Filter>(
    const Json& ref, const Json& kwargs, const SourceLocation& where, bool is_class)>;
void set_python_filter_factory(PythonFilterFactory factory);
const PythonFilterFactory& python_filter_factory();

// Registers every built-in filter (take_first, take_first_k, majority_vote, regex, regex_pos,
// remove_whitespace, lowercase, uppercase, map, format_span, multi_choice_regex, custom) and the
// filter classes of task utils.py files: "zeroshot/utils.X" and "cot_zeroshot/utils.X" for bbh's
// MultiChoiceRegexFilter, MapRegexFilter, NumberParseRegexFilter and WordSortFilter. Idempotent and
// thread-safe.
void register_builtin_filters();

// One named pipeline (the reference's FilterEnsemble): filters applied in sequence. As in the
// reference, filter instances are created afresh for every application.
class FilterEnsemble {
 public:
  // From one `filter_list` entry: {name: str, filter: [{function: name, ...kwargs}, ...]}.
  // `where.field` names the entry (e.g. "filter_list[1]"); errors name the offending field, e.g.
  // "filter_list[1].filter[0].function". Registers the built-in filters if needed.
  static FilterEnsemble from_config(const Json& entry, const SourceLocation& where);
  // The implicit pipeline of a task without filter_list: "none" = [take_first].
  static FilterEnsemble default_none();

  const std::string& name() const { return name_; }
  // The (function, kwargs) steps, as configured.
  const std::vector<std::pair<Json, Json>>& steps() const { return steps_; }
  // resps/docs as in Filter::apply; returns the filtered value of every instance (the
  // reference's `filtered_resps[name]`).
  std::vector<Json> apply(const std::vector<Json>& resps,
                          const std::vector<const Json*>& docs) const;

 private:
  std::string name_;
  std::vector<std::pair<Json, Json>> steps_;  // function (name or !function ref), kwargs
  std::vector<SourceLocation> where_;         // of each step, for errors at apply time
};

}  // namespace lmeval

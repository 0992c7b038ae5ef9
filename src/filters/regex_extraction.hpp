// The answer-extraction steps that lm_eval/filters/extraction.py and the bbh utils' filter
// copies share: regex compilation with located errors, re.findall(...)[group_select],
// filter_ignores and find_match.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "filters/filter_util.hpp"
#include "lmeval/core/regex.hpp"

namespace lmeval::filters {

// A regex from a filter kwarg; a bad pattern is a UserError at that kwarg.
std::shared_ptr<const PyRegex> compile_kwarg(const Kwargs& args, const std::string& key,
                                             const std::string& pattern);
// A regex the filter builds from data (choices, word lists): the reference raises re.error.
std::shared_ptr<const PyRegex> compile_runtime(const std::string& filter,
                                               const std::string& pattern);

// re.findall(text)[group_select] with Python indexing, built only for the selected match: a
// string (no or one group) or an array (a tuple of groups); nullopt when nothing matched.
std::optional<Json> select_match(const PyRegex& re, std::string_view text, long long group_select,
                                 const std::string& filter);

// Ordered mapping for a Python dict built in a loop: a repeated key keeps its first place and
// takes the later value.
using OrderedMap = std::vector<std::pair<std::string, std::string>>;
void assign(OrderedMap& map, const std::string& key, std::string value);

// filter_ignores: regexes_to_ignore (re.sub with ""), then ignore_case (lower), then
// ignore_punctuation (drop Unicode P* characters).
class FilterIgnores {
 public:
  explicit FilterIgnores(const Kwargs& args);
  bool touches() const { return !regexes_.empty() || ignore_case_ || ignore_punctuation_; }
  std::string apply(std::string text) const;

 private:
  std::vector<std::shared_ptr<const PyRegex>> regexes_;
  bool ignore_case_;
  bool ignore_punctuation_;
};

// find_match of the multiple-choice filters: the selected match; of a tuple its first non-empty
// group (when every group is empty: "" in extraction.py, IndexError in the bbh copies); stripped;
// then mapped through `convert` when a key equals it. [] (falsy) when nothing matched.
enum class EmptyGroups { kEmptyString, kRaise };
Json find_match(const PyRegex& re, std::string_view text, long long group_select,
                const std::string& filter, const OrderedMap& convert, EmptyGroups empty_groups);

// Python truthiness of a filtered value.
bool truthy(const Json& v);

}  // namespace lmeval::filters

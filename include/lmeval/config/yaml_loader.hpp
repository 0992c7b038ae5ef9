// YAML files as PyYAML reads them (YAML 1.1 scalars, `!function` tags), with source positions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"

namespace lmeval {

struct YamlFile {
  Json value;
  std::filesystem::path path;
  // JSON pointer ("/metric_list/0/metric") -> 1-based (line, column) of the value.
  std::unordered_map<std::string, std::pair<int, int>> marks;

  // Location of a value (falls back to the nearest known parent, then the file).
  SourceLocation where(const std::string& pointer, const std::string& field = {}) const;
};

// Parses YAML text; scalars resolved by PyYAML's YAML 1.1 rules (yes/no/on/off booleans, ~/null,
// ints incl. 0x/0o/0b/sexagesimal, floats only with a dot, `1e3` a string). `!function x.y` becomes
// a function reference (see below). Syntax errors throw UserError with file:line:column.
YamlFile parse_yaml(std::string_view text, const std::filesystem::path& origin);
YamlFile load_yaml(const std::filesystem::path& path);

// `!function utils.process_docs` in a file of folder D is kept as
// {"!function": "utils.process_docs", "dir": "<D's basename>", "file": ..., "line": n}.
Json make_function_ref(const std::string& name, const std::filesystem::path& file, int line);
bool is_function_ref(const Json& v);
std::string function_ref_name(const Json& v);  // "utils.process_docs"

}  // namespace lmeval

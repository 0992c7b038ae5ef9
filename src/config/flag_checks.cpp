// Range checks of run settings (see flag_checks.hpp).
#include "lmeval/config/flag_checks.hpp"

#include <cmath>
#include <filesystem>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/run_options.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

namespace {

std::string number_text(double v) { return py::float_repr(v); }

}  // namespace

void check_limit(double limit) {
  // 2^63 - 1 as a double rounds up to 2^63, so the bound is exclusive.
  if (!(limit > 0 && limit < 9223372036854775808.0))
    throw UserError(number_text(limit) + " is out of range", {"", 0, 0, "--limit"},
                    "a fraction of the documents between 0 and 1 (e.g. 0.1), or a document count "
                    "from 1 to 9223372036854775807");
}

void check_int_range(int64_t value, const std::string& flag, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    throw UserError(std::to_string(value) + " is out of range", {"", 0, 0, flag},
                    "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

std::string check_verbosity(const std::string& value) {
  std::string up = value;
  for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* level : {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})
    if (up == level) return up;
  throw UserError("'" + value + "' is not a log level", {"", 0, 0, "--verbosity"},
                  "DEBUG, INFO, WARNING, ERROR or CRITICAL");
}

std::vector<std::string> include_path_list(const std::string& value) {
  std::error_code ec;
  if (value.empty() || std::filesystem::exists(value, ec)) return {value};
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i)
    if (i == value.size() || value[i] == ':') {
      if (i > start) out.push_back(value.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

void check_include_path(const std::string& path) {
  std::error_code ec;
  const auto list = include_path_list(path);
  for (const auto& p : list)
    if (!std::filesystem::exists(p, ec))
      throw UserError(
          "'" + p + "' does not exist" + (list.size() > 1 ? " (one of '" + path + "')" : ""),
          {"", 0, 0, "--include_path"},
          "an existing folder of task YAML files, or several separated by ':'");
  if (list.empty())
    throw UserError("'" + path + "' names no folder", {"", 0, 0, "--include_path"},
                    "an existing folder of task YAML files, or several separated by ':'");
}

void check_setting_ranges(const EvalConfig& cfg) {
  // The checks belong to the run flag table's entries (config/run_options.cpp).
  for (const auto& o : run_options())
    if (o.check) o.check(cfg);
}

}  // namespace lmeval

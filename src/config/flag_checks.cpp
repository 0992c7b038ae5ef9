// Range checks of run settings (see flag_checks.hpp).
#include "lmeval/config/flag_checks.hpp"

#include <cmath>
#include <filesystem>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

namespace {

constexpr int64_t kMaxInt = 2147483647;

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

void check_include_path(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UserError("'" + path + "' does not exist", {"", 0, 0, "--include_path"},
                    "an existing folder of task YAML files");
}

void check_setting_ranges(const EvalConfig& cfg) {
  if (cfg.limit) check_limit(*cfg.limit);
  if (cfg.num_fewshot) check_int_range(*cfg.num_fewshot, "--num_fewshot", 0, kMaxInt);
  if (cfg.max_batch_size) check_int_range(*cfg.max_batch_size, "--max_batch_size", 1, kMaxInt);
  check_int_range(cfg.bootstrap_iters, "--bootstrap_iters", 0, kMaxInt);
  if (cfg.batch_size.is_string())
    check_batch_size(cfg.batch_size.get<std::string>(), "--batch_size");
  else if (cfg.batch_size.is_number_integer())
    check_int_range(cfg.batch_size.get<int64_t>(), "--batch_size", 1, kMaxBatchSize);
  if (cfg.verbosity) check_verbosity(*cfg.verbosity);
  if (cfg.include_path) check_include_path(*cfg.include_path);
}

}  // namespace lmeval

// The one logger of lm-eval: spdlog's default logger, writing to stderr, with levels.
#pragma once

#include <string>
#include <string_view>

namespace lmeval::log {

// Points spdlog's default logger at stderr (logs and progress go to stderr; results to stdout).
// Called once by main; library code logs through spdlog::info/warn/... or the functions below.
void init();

// The level as the reference's setup_logging picks it (lm_eval/utils.py): $LMEVAL_LOG_LEVEL when
// it names a Python logging level (CRITICAL, FATAL, ERROR, WARN, WARNING, INFO, DEBUG, NOTSET;
// any case), else `fallback` (INFO, or a --verbosity name). Returns the name applied.
std::string apply_level(const std::string& fallback = "INFO");

// Plain-string entry points for translation units that must not include spdlog (the torch ones:
// a CUDA libtorch bundles its own fmt); callers format the message themselves.
void debug(std::string_view message);
void info(std::string_view message);
void warn(std::string_view message);
void error(std::string_view message);

}  // namespace lmeval::log

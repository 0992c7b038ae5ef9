// The one logger (core/log.hpp) over spdlog's default logger.
#include "lmeval/core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>

namespace lmeval::log {

void init() {
  static bool done = false;
  if (done) return;
  done = true;
  // Unnamed, as spdlog's own default logger: the lines keep its format, only the stream changes.
  auto logger =
      std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_level(spdlog::default_logger()->level());
  spdlog::set_default_logger(logger);
}

namespace {

// Python's logging._nameToLevel, as spdlog levels.
std::optional<spdlog::level::level_enum> python_level(const std::string& name) {
  std::string up = name;
  for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "CRITICAL" || up == "FATAL") return spdlog::level::critical;
  if (up == "ERROR") return spdlog::level::err;
  if (up == "WARN" || up == "WARNING") return spdlog::level::warn;
  if (up == "INFO") return spdlog::level::info;
  if (up == "DEBUG") return spdlog::level::debug;
  if (up == "NOTSET") return spdlog::level::trace;  // NOTSET logs everything
  return std::nullopt;
}

}  // namespace

std::string apply_level(const std::string& fallback) {
  std::string chosen = fallback;
  // getLevelName returns the string back for a name it does not know: then the fallback.
  if (const char* env = std::getenv("LMEVAL_LOG_LEVEL"); env && *env && python_level(env))
    chosen = env;
  auto level = python_level(chosen);
  spdlog::set_level(level ? *level : spdlog::level::info);
  for (auto& c : chosen) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return chosen;
}

void debug(std::string_view message) { spdlog::debug("{}", message); }
void info(std::string_view message) { spdlog::info("{}", message); }
void warn(std::string_view message) { spdlog::warn("{}", message); }
void error(std::string_view message) { spdlog::error("{}", message); }

}  // namespace lmeval::log

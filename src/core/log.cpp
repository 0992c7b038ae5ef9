// The one logger (core/log.hpp) over spdlog's default logger.
#include "lmeval/core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <memory>

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

void set_level(const std::string& name) {
  std::string s = name;
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Python's logging says WARNING where spdlog says warn.
  spdlog::set_level(spdlog::level::from_str(s == "warning" ? std::string("warn") : s));
}

void debug(std::string_view message) { spdlog::debug("{}", message); }
void info(std::string_view message) { spdlog::info("{}", message); }
void warn(std::string_view message) { spdlog::warn("{}", message); }
void error(std::string_view message) { spdlog::error("{}", message); }

}  // namespace lmeval::log

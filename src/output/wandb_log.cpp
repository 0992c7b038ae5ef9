// W&B logging through the active Python environment (output/wandb_log.hpp).
#include "lmeval/output/wandb_log.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_env.hpp"
#include "lmeval/core/python_format.hpp"
#include "wandb_logger_py.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

// Logging uploads tables and artifacts: minutes on a slow link, never hours.
constexpr int kWandbTimeoutMs = 30 * 60 * 1000;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lm-eval-wandb-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw RuntimeError("cannot create a temporary folder for W&B");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace

void check_wandb_available() {
  PythonEnv env = active_python_env();
  if (env.python.empty())
    throw UserError("--wandb_args needs Python with the wandb package, and no Python was found (" +
                        env.described + ")",
                    {"", 0, 0, "--wandb_args"}, "a Python environment with `pip install wandb`");
  int status = -1;
  auto out = run_python(env.python, "import wandb\nprint(getattr(wandb, '__version__', '?'))",
                        60000, &status);
  if (!out)
    throw UserError(
        "--wandb_args needs the wandb package, which " + env.described + " cannot import",
        {"", 0, 0, "--wandb_args"}, "`pip install wandb` in that environment");
}

WandbOutcome log_to_wandb(const Json& wandb_args, const Json& wandb_config_args,
                          const Json& results,
                          const std::vector<std::pair<std::string, std::vector<Json>>>* samples) {
  WandbOutcome outcome;
  PythonEnv env = active_python_env();
  try {
    TempDir dir;
    Json payload = {
        {"wandb_args", wandb_args.is_object() ? wandb_args : Json::object()},
        {"wandb_config_args", wandb_config_args.is_object() ? wandb_config_args : Json::object()},
        {"results", results},
        {"samples", nullptr}};
    if (samples) {
      Json s = Json::object();
      for (const auto& [task, lines] : *samples) s[task] = lines;
      payload["samples"] = std::move(s);
    }
    const fs::path payload_file = dir.path / "payload.json";
    const fs::path status_file = dir.path / "status.json";
    {
      std::ofstream f(payload_file, std::ios::binary);
      f << payload.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (!f) throw RuntimeError("cannot write " + payload_file.string());
    }
    std::string code = std::string(kWandbLoggerPy) + "\nlog_run(" +
                       py::repr(Json(payload_file.string())) + ", " +
                       py::repr(Json(status_file.string())) + ")\n";
    auto out = run_python(env.python, code, kWandbTimeoutMs);
    if (out) outcome.output = *out;
    std::ifstream in(status_file);
    Json status = Json::parse(in, nullptr, false);
    if (!status.is_object()) {
      outcome.message = env.described + " ended without finishing the W&B logging";
      return outcome;
    }
    outcome.ok = status.value("ok", false);
    if (outcome.ok) {
      if (status.contains("url") && status["url"].is_string())
        outcome.message = status["url"].get<std::string>();
    } else {
      outcome.message = status.value("error", "unknown error");
    }
  } catch (const std::exception& e) {
    outcome.message = e.what();
  }
  return outcome;
}

}  // namespace lmeval

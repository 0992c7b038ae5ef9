// Opening liblmeval_python.so and starting its interpreter in the active environment, once.
#include "lmeval/core/embedded_python.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <mutex>

#include "lmeval/core/json.hpp"
#include "lmeval/core/python_env.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPluginFile = "liblmeval_python.so";

// What the environment's own interpreter says of itself: the embedded one takes its sys.path.
constexpr const char* kQuery =
    "import json, sys, sysconfig\n"
    "p = sysconfig.get_paths()\n"
    "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix, 'exec_prefix': "
    "sys.exec_prefix, 'path': sys.path, 'stdlib': [p['stdlib'], p['platstdlib']], "
    "'version': list(sys.version_info[:2])}))\n";

std::string python_version_name(int v) {
  return std::to_string(v / 100) + "." + std::to_string(v % 100);
}

void open_and_start(EmbeddedPython& out) {
  const fs::path path = python_plugin_path();
  if (!fs::exists(path)) {
    out.failure =
        "lm-eval's Python plugin " + path.string() + " is not there: " + how_to_enable_python();
    return;
  }
  // RTLD_GLOBAL: the extension modules Python imports (numpy, pyarrow, torch, ...) take the C API
  // from the global scope, as they do in the python3 executable. Never closed.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* err = dlerror();
    out.failure = "lm-eval's Python plugin " + path.string() + " could not be loaded (" +
                  std::string(err ? err : "unknown error") +
                  "): install its libpython3 (Debian python3-dev) or rebuild it with "
                  "scripts/setup.sh";
    return;
  }
  using ApiFn = const PythonPluginApi* (*)();
  auto get = reinterpret_cast<ApiFn>(dlsym(handle, "lmeval_python_plugin_api"));
  const std::string expected =
      std::string(LMEVAL_VERSION_STRING) + "/" + std::to_string(kPythonPluginAbi);
  const PythonPluginApi* api = get ? get() : nullptr;
  if (!api || expected != api->abi) {
    out.failure = "lm-eval's Python plugin " + path.string() + " was built from other sources (" +
                  (api ? std::string(api->abi) : "no version") + ", this lm-eval is " + expected +
                  "): rebuild it with scripts/setup.sh";
    return;
  }
  const PythonEnv py = active_python_env();
  out.described = py.described;
  if (py.python.empty()) {
    out.failure =
        "Python code runs in the active Python environment, and there is none: " + py.described +
        "; activate a virtual environment or put python3 on PATH";
    return;
  }
  int status = 0;
  const std::string text = run_python(py.python, kQuery, 120000, &status).value_or("");
  Json info;
  try {
    info = Json::parse(text);
  } catch (const std::exception&) {
    status = -1;
  }
  if (status != 0 || !info.is_object()) {
    out.failure = "Python code runs in " + py.described + ", which did not run (exit " +
                  std::to_string(status) + ")";
    return;
  }
  PythonEnvironment env;
  env.executable = info.value("executable", "");
  env.prefix = info.value("prefix", "");
  env.exec_prefix = info.value("exec_prefix", "");
  for (const auto& p : info["path"]) env.path.push_back(p.get<std::string>());
  for (const auto& p : info["stdlib"]) env.stdlib.push_back(p.get<std::string>());
  env.major = info["version"][0].get<int>();
  env.minor = info["version"][1].get<int>();
  if (env.major * 100 + env.minor != api->python_version) {
    out.failure = "Python code runs in " + py.described + ", which is Python " +
                  std::to_string(env.major) + "." + std::to_string(env.minor) +
                  ", but this lm-eval embeds Python " + python_version_name(api->python_version) +
                  " (the libpython3 it was built with): activate a Python " +
                  python_version_name(api->python_version) +
                  " environment, or rebuild lm-eval against that Python's libpython";
    return;
  }
  std::string error;
  bool started;
  {
    GuardedCall guard("the embedded Python (" + py.described + ") while starting",
                      python_call_timeout_s());
    started = api->start(&env, &error);
  }
  if (!started) {
    out.failure = "the embedded Python (" + py.described + ") did not start: " + error;
    return;
  }
  out.api = api;
}

}  // namespace

fs::path python_plugin_path() {
  if (const char* env = std::getenv("LMEVAL_PLUGIN_DIR"); env && *env)
    return fs::path(env) / kPluginFile;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path() / kPluginFile;
  fs::path here = exe.parent_path() / kPluginFile;
  fs::path installed = exe.parent_path().parent_path() / "lib" / "lm-eval" / kPluginFile;
  if (!fs::exists(here, ec) && fs::exists(installed, ec)) return installed;
  return here;
}

bool python_plugin_present() { return fs::exists(python_plugin_path()); }

std::string how_to_enable_python() {
  return "build lm-eval with its Python plugin (liblmeval_python.so: Debian's python3-dev and "
         "pybind11-dev, then scripts/setup.sh; it is on unless -DLMEVAL_WITH_PYTHON=OFF), or "
         "point LMEVAL_PLUGIN_DIR at the folder that holds it";
}

namespace {

// Set once at start-up by the Python package, before any task is loaded.
std::string& refusal() {
  static std::string why;
  return why;
}

}  // namespace

void refuse_embedded_python(std::string why) { refusal() = std::move(why); }

const EmbeddedPython& embedded_python() {
  static EmbeddedPython py;
  static std::once_flag once;
  std::call_once(once, [] {
    if (refusal().empty())
      open_and_start(py);
    else
      py.failure = refusal();
  });
  return py;
}

}  // namespace lmeval

// The embedded CPython (liblmeval_python.so) in lm-eval's own process, opened and started once for
// whoever needs it first: task helpers (tasks/functions/python_functions.cpp) and the hf backend's
// transformers path (models/hf/python_model.cpp). Finding the interpreter is core/python_env.hpp.
#pragma once

#include <filesystem>
#include <string>

#include "lmeval/core/python_plugin_api.hpp"

namespace lmeval {

struct EmbeddedPython {
  const PythonPluginApi* api = nullptr;  // null when Python cannot run here
  // Why it cannot, as a clause a caller appends to what needed it ("Python code runs in ...").
  std::string failure;
  // Which interpreter it runs (core/python_env.hpp's description), for messages.
  std::string described;
};

// Opens the plugin, checks it was built from these sources and embeds the Python version of the
// active environment, and starts the interpreter in that environment: once per process (later
// calls return the first outcome). Never throws.
const EmbeddedPython& embedded_python();

// Makes embedded_python() fail with `why` instead of opening the plugin: a process that is
// itself a Python interpreter (the lm_eval_cpp package) must not start a second one. Call before
// anything needs Python; the first outcome of embedded_python() is kept.
void refuse_embedded_python(std::string why);

// $LMEVAL_PLUGIN_DIR, else beside the executable (build/), else PREFIX/lib/lm-eval (installed).
std::filesystem::path python_plugin_path();

// Whether this lm-eval has its Python plugin where it looks for it.
bool python_plugin_present();

// What to do to run Python when the plugin is absent.
std::string how_to_enable_python();

}  // namespace lmeval

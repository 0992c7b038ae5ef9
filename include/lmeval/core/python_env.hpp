// The user's active Python environment: the interpreter lm-eval asks about the reference's
// package (and whose packages Python helpers import), found as a shell would: $VIRTUAL_ENV's,
// else `python3` on PATH.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace lmeval {

struct PythonEnv {
  std::filesystem::path python;  // empty when none was found
  std::filesystem::path venv;    // $VIRTUAL_ENV, when set
  std::string described;         // for messages: which interpreter and why
};

PythonEnv active_python_env();

// Runs `python -c code` (stdin closed, stderr discarded) and returns its stdout, or nullopt when
// it could not start, exited non-zero or ran past `timeout_ms` (then it is killed). The exit
// status goes to *exit_status when given (-1: it did not start, was killed or timed out).
std::optional<std::string> run_python(const std::filesystem::path& python, const std::string& code,
                                      int timeout_ms, int* exit_status = nullptr);

}  // namespace lmeval

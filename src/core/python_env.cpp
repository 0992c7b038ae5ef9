#include "lmeval/core/python_env.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>

namespace lmeval {

namespace fs = std::filesystem;

PythonEnv active_python_env() {
  PythonEnv env;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
    env.venv = venv;
    for (const char* name : {"python3", "python"}) {
      fs::path p = env.venv / "bin" / name;
      if (::access(p.c_str(), X_OK) == 0) {
        env.python = p;
        env.described = "the active virtual environment's " + p.string() + " ($VIRTUAL_ENV)";
        return env;
      }
    }
    env.described = "$VIRTUAL_ENV (" + env.venv.string() + ", which has no bin/python3)";
    return env;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / "python3";
    if (::access(p.c_str(), X_OK) == 0) {
      env.python = p;
      env.described = "python3 on PATH (" + p.string() + ")";
      return env;
    }
  }
  env.described = "python3 on PATH (none found)";
  return env;
}

std::optional<std::string> run_python(const fs::path& python, const std::string& code,
                                      int timeout_ms, int* exit_status) {
  if (exit_status) *exit_status = -1;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 2);
    }
    const std::string exe = python.string();
    ::execl(exe.c_str(), exe.c_str(), "-c", code.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exit_status && !timed_out && WIFEXITED(status)) *exit_status = WEXITSTATUS(status);
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace lmeval

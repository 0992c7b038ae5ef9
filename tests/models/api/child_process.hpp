// Whether a child process lm-eval started is still running (the managed servers' tests).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace lmeval::testing {

// True when `pid` is still running 5 s from now (it is polled: a process on its way out has
// that long to go). A zombie (exited, not yet reaped by init) counts as gone.
inline bool alive(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (::kill(pid, 0) != 0) return false;
    std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(st, line);
    const size_t rp = line.rfind(')');
    if (rp != std::string::npos && rp + 2 < line.size() && line[rp + 2] == 'Z') return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace lmeval::testing

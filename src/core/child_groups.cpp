// The registry of child process groups (child_groups.hpp): a fixed array of atomics, so that a
// signal handler can read it.
#include "lmeval/core/child_groups.hpp"

#include <signal.h>

#include <atomic>

namespace lmeval {

namespace {
constexpr int kSlots = 64;
std::atomic<pid_t> g_groups[kSlots];
}  // namespace

void register_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pgid)) return;
  }
}

void unregister_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t cur = pgid;
    if (slot.compare_exchange_strong(cur, 0)) return;
  }
}

void kill_child_groups(int sig) {
  for (auto& slot : g_groups)
    if (const pid_t g = slot.load(); g > 0) ::kill(-g, sig);
}

}  // namespace lmeval

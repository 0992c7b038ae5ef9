// The stop-signal handler (only async-signal-safe calls: a store, write, signal, raise).
#include "lmeval/core/stop_signal.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace lmeval {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs a lock-free flag");

extern "C" void on_stop_signal(int sig) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // Second signal: the user insists (or the run is stuck in a long step): stop now.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  static const char msg[] =
      "\nlm-eval: stopping after the current batch (send the signal again to stop at once)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
}

}  // namespace

Interrupted::Interrupted(int signal, std::string message)
    : signal_(signal), message_(std::move(message)) {}

void install_stop_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // system calls in flight carry on; the flag is checked between batches
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int stop_signal() { return g_signal.load(std::memory_order_relaxed); }

void throw_if_stopped() {
  if (int sig = stop_signal()) throw Interrupted(sig, "interrupted by " + signal_name(sig));
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace lmeval

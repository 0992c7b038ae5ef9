// The stop-signal handler (only async-signal-safe calls: a store, write, signal, raise), the
// watchdog that keeps it installed and bounds a stop, and the guard of calls that may crash.
#include "lmeval/core/stop_signal.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "lmeval/core/child_groups.hpp"
#include "lmeval/core/error.hpp"

namespace lmeval {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs a lock-free flag");
std::atomic<bool> g_installed{false};
std::atomic<bool> g_dying{false};  // a second signal: the default action is under way
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Guarded calls: what each names and when it must have returned, read by the crash handler and
// the watchdog. Written before g_depth is raised, so readers that see the depth see the slot.
constexpr int kMaxDepth = 8;
struct Slot {
  char what[1024];
  std::atomic<int64_t> deadline_ns{0};  // steady clock; 0: none
  long long timeout_s = 0;
};
Slot g_slots[kMaxDepth];
std::atomic<int> g_depth{0};
pid_t g_pid = 0;  // the process whose calls are guarded (forked children are not)

void say(const char* s) {
  ssize_t ignored = ::write(2, s, std::strlen(s));
  (void)ignored;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* crash_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "a signal";
  }
}

extern "C" void on_crash(int sig) {
  const int depth = g_depth.load(std::memory_order_acquire);
  if (depth <= 0 || ::getpid() != g_pid) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  say("\nlm-eval: error: ");
  say(g_slots[depth - 1].what);
  say(" crashed (");
  say(crash_name(sig));
  say(") (expected Python task code that returns or raises; the crash is in the helper or a "
      "library it calls)\n");
  kill_child_groups(SIGKILL);
  ::_exit(2);
}

extern "C" void on_stop_signal(int sig);

void install_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // system calls in flight carry on; the flag is checked between batches
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
}

// Every 0.1 s: the stop handlers back in place if something replaced them (Python's
// signal.signal, ctypes, a library), a stop that has not ended the run within the grace period
// ended here, a guarded call past its deadline ended here.
void watchdog() {
  int64_t stop_seen_ns = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (g_installed.load() && !g_dying.load()) {
      bool replaced = false;
      for (int sig : kStopSignals) {
        struct sigaction cur {};
        if (sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler != on_stop_signal) replaced = true;
      }
      if (replaced) install_handlers();
    }
    const int depth = g_depth.load(std::memory_order_acquire);
    const int64_t t = now_ns();
    if (const int sig = g_signal.load()) {
      if (!stop_seen_ns) stop_seen_ns = t;
      if (t - stop_seen_ns > int64_t{kStopGraceSeconds} * 1000000000) {
        say("\nlm-eval: interrupted by ");
        say(signal_name(sig).c_str());
        say(": the run did not stop within ");
        say(std::to_string(kStopGraceSeconds).c_str());
        say(" s of the signal (busy in ");
        say(depth > 0 ? g_slots[depth - 1].what : "a step that does not check for stops");
        say("): stopped at once; no results written\n");
        kill_child_groups(SIGKILL);
        ::_exit(128 + sig);
      }
    }
    for (int d = 0; d < depth; ++d) {
      const int64_t deadline = g_slots[d].deadline_ns.load();
      if (deadline && t > deadline) {
        say("\nlm-eval: error: ");
        say(g_slots[d].what);
        say(" did not return within ");
        say(std::to_string(g_slots[d].timeout_s).c_str());
        say(" s (expected Python task code that returns; LMEVAL_PYTHON_CALL_TIMEOUT_S sets the "
            "limit, 0 for none)\n");
        ::_exit(2);
      }
    }
  }
}

void ensure_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] { std::thread(watchdog).detach(); });
}

void install_crash_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pid = ::getpid();
    // A crash from a stack overflow (deep recursion in C code) needs a stack of its own.
    static char alt[1 << 16];
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
  });
}

extern "C" void on_stop_signal(int sig) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // Second signal: the user insists (or the run is stuck in a long step): stop now, and the
    // servers lm-eval started with it (their destructors will not run).
    g_dying.store(true);
    kill_child_groups(SIGKILL);
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
  install_handlers();
  g_installed.store(true);
  ensure_watchdog();
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

GuardedCall::GuardedCall(const std::string& what, double timeout_s) {
  install_crash_handlers();
  ensure_watchdog();
  slot_ = g_depth.load();
  if (slot_ >= kMaxDepth) return;  // deeper calls share the innermost guard
  Slot& s = g_slots[slot_];
  const size_t n = std::min(what.size(), sizeof s.what - 1);
  std::memcpy(s.what, what.data(), n);
  s.what[n] = '\0';
  s.timeout_s = static_cast<long long>(timeout_s);
  s.deadline_ns.store(timeout_s > 0 ? now_ns() + static_cast<int64_t>(timeout_s * 1e9) : 0);
  g_depth.store(slot_ + 1, std::memory_order_release);
}

GuardedCall::~GuardedCall() {
  if (slot_ < kMaxDepth) g_depth.store(slot_, std::memory_order_release);
}

double python_call_timeout_s() {
  static const double s = [] {
    const char* v = std::getenv("LMEVAL_PYTHON_CALL_TIMEOUT_S");
    if (!v) return 900.0;
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !(x >= 0) || x > 1e7)
      throw UserError(std::string("LMEVAL_PYTHON_CALL_TIMEOUT_S is '") + v + "'",
                      {"", 0, 0, "LMEVAL_PYTHON_CALL_TIMEOUT_S"},
                      "seconds a Python helper call may run, from 0 (no limit) to 10000000 "
                      "(unset: 900)");
    return x;
  }();
  return s;
}

}  // namespace lmeval

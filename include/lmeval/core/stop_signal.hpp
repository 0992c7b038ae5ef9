// Stopping a run cleanly on SIGINT, SIGTERM or SIGHUP: the handler only records the signal (it is
// async-signal-safe); the run checks the record between batches and unwinds with `Interrupted`,
// so caches are flushed by their destructors and no results are written.
#pragma once

#include <exception>
#include <string>

namespace lmeval {

// Thrown where a run notices a stop signal. Exit code 128 + signal (130, 143, 129).
class Interrupted : public std::exception {
 public:
  Interrupted(int signal, std::string message);
  const char* what() const noexcept override { return message_.c_str(); }
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
  std::string message_;
};

// Installs the handlers of SIGINT, SIGTERM and SIGHUP: the first one records the signal and
// prints one line; a second one of any of them ends the process at once with the default action.
// A watchdog thread puts the handlers back within 0.1 s when other code (a Python helper, a
// library) replaces or ignores them, and ends the process with exit 128 + signal when a stop has
// not ended the run kStopGraceSeconds after the first signal (a step that never checks for
// stops: an endless helper, a huge template, a slow batch).
void install_stop_signal_handlers();
inline constexpr int kStopGraceSeconds = 5;

// The recorded signal number; 0 when none arrived.
int stop_signal();

// Throws Interrupted when a stop signal arrived.
void throw_if_stopped();

// "SIGINT", "SIGTERM", "SIGHUP" (else "signal N").
std::string signal_name(int signal);

// A call into code that can crash the process or never return (an embedded-Python helper). While
// it runs, a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) ends the process with exit 2 and
// one line, "lm-eval: error: <what> crashed (SIGSEGV) ...", instead of the signal; running
// past `timeout_s` (0: no limit) ends it with exit 2 and "<what> did not return within N s". A
// stop signal meanwhile names `what` if the call keeps the run from stopping. `what` names the
// YAML file and line, the function and its module. Calls nest (the outer one is restored).
class GuardedCall {
 public:
  GuardedCall(const std::string& what, double timeout_s);
  ~GuardedCall();
  GuardedCall(const GuardedCall&) = delete;
  GuardedCall& operator=(const GuardedCall&) = delete;

 private:
  int slot_;
};

// Seconds a Python helper call may run: LMEVAL_PYTHON_CALL_TIMEOUT_S (0: no limit), else 900. A
// value that is not a number of seconds is a UserError naming the variable.
double python_call_timeout_s();

}  // namespace lmeval

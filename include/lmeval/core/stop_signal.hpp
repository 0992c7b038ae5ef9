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
void install_stop_signal_handlers();

// The recorded signal number; 0 when none arrived.
int stop_signal();

// Throws Interrupted when a stop signal arrived.
void throw_if_stopped();

// "SIGINT", "SIGTERM", "SIGHUP" (else "signal N").
std::string signal_name(int signal);

}  // namespace lmeval

// Progress of the model phase on stderr: one line redrawn in place on a terminal (the fields
// tqdm shows, never wider than the terminal), plain lines at a steady pace in a log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace lmeval {

struct ProgressState {
  std::string label;        // what is counted: "Running loglikelihood requests" (tqdm's desc)
  std::string short_label;  // the same in fewer columns ("loglikelihood"); empty: the label
  size_t done = 0;
  size_t total = 0;
  double elapsed_s = 0;
  int64_t tokens = -1;  // tokens processed so far; -1 where the backend counts none
};

// tqdm's format_interval: MM:SS, H:MM:SS from an hour on.
std::string format_interval(double seconds);

// The line drawn in place on a terminal `columns` wide, at most columns - 1 characters (code
// points) so that the cursor never reaches the last column and the terminal never wraps it.
// tqdm's layout ("desc:  45%|####      | 450/1000 [00:12<00:15, 36.50it/s, 812 tok/s]") while
// it fits; narrower terminals lose the bar first, then the long label for the short one,
// tokens/s, the rate, the elapsed time, the short label (cut, then dropped) and the percentage;
// done/total goes last. `unicode`: the bar in
// tqdm's eighth blocks, else in its ASCII digits and '#'.
std::string format_progress_bar(const ProgressState& s, int columns, bool unicode = true);

// The plain line written to a log: "desc: 450/1000 (45%), 36.50it/s, 812 tok/s, elapsed 00:12,
// ETA 00:15".
std::string format_progress_log(const ProgressState& s);

// When a log line is due: at the first report, each time done crosses another `step_percent` of
// total, when `interval_s` has passed since the last line, and once at the end. Times are
// seconds of any monotonic clock (tests pass their own).
class ProgressLogSchedule {
 public:
  explicit ProgressLogSchedule(double interval_s = 30, int step_percent = 10);
  bool due(size_t done, size_t total, double now_s);

 private:
  double interval_s_;
  int step_percent_;
  bool any_ = false;
  bool ended_ = false;
  double last_s_ = 0;
  size_t last_step_ = 0;
};

// The width of the terminal on `fd`: TIOCGWINSZ, else $COLUMNS, else 80 (tqdm's order).
int terminal_columns(int fd);

enum class ProgressMode { Off, Bar, Log };
// $LMEVAL_PROGRESS: 0 (or off) nothing, 1 (or bar) the in-place line, log the plain lines;
// unset or anything else: the line on a terminal, the plain lines otherwise.
ProgressMode progress_mode(bool stderr_is_terminal);

class Progress {
 public:
  using Clock = std::function<double()>;                 // monotonic seconds
  using Sink = std::function<void(const std::string&)>;  // writes text as given
  using Columns = std::function<int()>;                  // the terminal's width now

  // Mode from the environment and stderr; the steady clock; writes to stderr.
  Progress(std::string label, std::string short_label);
  Progress(std::string label, std::string short_label, ProgressMode mode, Clock clock, Sink sink,
           Columns columns, double log_interval_s = 30);

  void update(size_t done, size_t total, int64_t tokens = -1);
  // Ends the in-place line (a newline) so that what follows starts on a line of its own.
  void finish();

 private:
  ProgressState state_at(size_t done, size_t total, int64_t tokens) const;

  std::string label_;
  std::string short_label_;
  ProgressMode mode_;
  Clock clock_;
  Sink sink_;
  Columns columns_;
  ProgressLogSchedule schedule_;
  double start_s_;
  double last_draw_s_ = -1;
  bool unicode_ = true;
  bool shown_ = false;
};

}  // namespace lmeval

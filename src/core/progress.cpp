// The progress line and log lines (core/progress.hpp).
#include "lmeval/core/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace lmeval {

namespace {

// Code points: every character these lines hold takes one column.
size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The pieces of one state, formatted once as tqdm formats them (tqdm.format_meter).
struct Fields {
  std::string percent;    // " 45%"
  std::string counts;     // "450/1000"
  std::string elapsed;    // "00:12"
  std::string remaining;  // "00:15", "?" before any rate is known
  std::string rate;       // "36.50it/s", " 2.50s/it" below one per second, "?it/s"
  std::string tokens;     // "812 tok/s", empty where not counted
  double fraction = 0;
};

Fields fields_of(const ProgressState& s) {
  Fields f;
  f.fraction = s.total ? static_cast<double>(s.done) / static_cast<double>(s.total) : 0;
  if (f.fraction > 1) f.fraction = 1;
  f.percent = printf_string("%3.0f", f.fraction * 100) + "%";
  f.counts = std::to_string(s.done) + "/" + std::to_string(s.total);
  f.elapsed = format_interval(s.elapsed_s);
  // The mean rate over the whole step (tqdm smooths it; a mean is steadier for an ETA of hours).
  double rate = s.elapsed_s > 0 ? static_cast<double>(s.done) / s.elapsed_s : 0;
  if (rate <= 0) {
    f.rate = "?it/s";
    f.remaining = "?";
  } else {
    f.rate = 1 / rate > 1 ? printf_string("%5.2f", 1 / rate) + "s/it"
                          : printf_string("%5.2f", rate) + "it/s";
    double left = s.total > s.done ? static_cast<double>(s.total - s.done) / rate : 0;
    f.remaining = format_interval(left);
  }
  if (s.tokens >= 0 && s.elapsed_s > 0)
    f.tokens = std::to_string(static_cast<long long>(static_cast<double>(s.tokens) / s.elapsed_s)) +
               " tok/s";
  return f;
}

// tqdm's Bar: `width` cells, full cells then one partial cell (in eighths) then blanks.
std::string bar_of(double fraction, size_t width, bool unicode) {
  static const char* const kUtf[] = {" ",      "\u258F", "\u258E", "\u258D", "\u258C",
                                     "\u258B", "\u258A", "\u2589", "\u2588"};
  static const char* const kAscii[] = {" ", "1", "2", "3", "4", "5", "6", "7", "8", "9", "#"};
  const char* const* set = unicode ? kUtf : kAscii;
  const size_t steps = unicode ? 8 : 10;
  // int(frac * N_BARS * nsyms), multiplied in tqdm's order (the rounding of a product).
  auto cells =
      static_cast<size_t>(fraction * static_cast<double>(width) * static_cast<double>(steps));
  size_t full = cells / steps, part = cells % steps;
  std::string out;
  for (size_t i = 0; i < full && i < width; ++i) out += set[steps];
  if (full < width) {
    out += set[part];
    out.append(width - full - 1, ' ');
  }
  return out;
}

// The label cut to `room` columns with "..." (it is ASCII: the text of dispatch); none when
// fewer than four of its characters would be left.
std::string shortened(const std::string& label, size_t room) {
  if (label.size() <= room) return label;
  if (room < 7) return "";
  return label.substr(0, room - 3) + "...";
}

}  // namespace

std::string format_interval(double seconds) {
  auto t = seconds > 0 ? static_cast<long long>(seconds) : 0;
  long long mins = t / 60, s = t % 60, h = mins / 60, m = mins % 60;
  char buf[48];
  if (h)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", m, s);
  return buf;
}

std::string format_progress_bar(const ProgressState& s, int columns, bool unicode) {
  const Fields f = fields_of(s);
  const size_t limit = columns > 1 ? static_cast<size_t>(columns - 1) : 0;
  const std::string tok = f.tokens.empty() ? "" : ", " + f.tokens;
  auto desc = [](const std::string& label) { return label.empty() ? label : label + ": "; };
  const std::string& short_label = s.short_label.empty() ? s.label : s.short_label;
  auto fits = [limit](const std::string& line) { return display_width(line) <= limit; };

  // tqdm's l_bar and r_bar around a bar that takes the columns left: at least 10 of them, or
  // none.
  const std::string all =
      " " + f.counts + " [" + f.elapsed + "<" + f.remaining + ", " + f.rate + tok + "]";
  {
    std::string left = desc(s.label) + f.percent + "|";
    std::string right = "|" + all;
    size_t used = display_width(left) + display_width(right);
    if (limit >= used + 10) return left + bar_of(f.fraction, limit - used, unicode) + right;
  }
  // Without the bar: the short label, then the less telling fields one by one.
  if (std::string line = desc(s.label) + f.percent + all; fits(line)) return line;
  for (const std::string& tail :
       {all, " " + f.counts + " [" + f.elapsed + "<" + f.remaining + ", " + f.rate + "]",
        " " + f.counts + " [" + f.elapsed + "<" + f.remaining + "]",
        " " + f.counts + " ETA " + f.remaining})
    if (std::string line = desc(short_label) + f.percent + tail; fits(line)) return line;
  // The short label cut to what is left, then none.
  const std::string rest = f.percent + " " + f.counts + " ETA " + f.remaining;
  if (!short_label.empty() && rest.size() + 2 < limit) {
    std::string cut = shortened(short_label, limit - rest.size() - 2);
    if (!cut.empty()) return cut + ": " + rest;
  }
  const std::string trimmed = rest.substr(rest.find_first_not_of(' '));
  for (const std::string& line : {trimmed, f.counts + " ETA " + f.remaining, f.counts})
    if (fits(line)) return line;
  return f.counts.substr(0, limit);
}

std::string format_progress_log(const ProgressState& s) {
  const Fields f = fields_of(s);
  std::string pct = f.percent.substr(f.percent.find_first_not_of(' '));
  std::string rate = f.rate.substr(f.rate.find_first_not_of(' '));
  return (s.label.empty() ? "" : s.label + ": ") + f.counts + " (" + pct + "), " + rate +
         (f.tokens.empty() ? "" : ", " + f.tokens) + ", elapsed " + f.elapsed + ", ETA " +
         f.remaining;
}

ProgressLogSchedule::ProgressLogSchedule(double interval_s, int step_percent)
    : interval_s_(interval_s), step_percent_(step_percent > 0 ? step_percent : 10) {}

bool ProgressLogSchedule::due(size_t done, size_t total, double now_s) {
  if (total == 0 || ended_) return false;
  const size_t step = done >= total ? 100 / static_cast<size_t>(step_percent_) + 1
                                    : done * 100 / total / static_cast<size_t>(step_percent_);
  const bool end = done >= total;
  const bool wanted = !any_ || end || step > last_step_ || now_s - last_s_ >= interval_s_;
  if (!wanted) return false;
  any_ = true;
  ended_ = end;
  last_s_ = now_s;
  last_step_ = step;
  return true;
}

int terminal_columns(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS"); env && *env) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v < 100000) return static_cast<int>(v);
  }
  return 80;
}

ProgressMode progress_mode(bool stderr_is_terminal) {
  if (const char* env = std::getenv("LMEVAL_PROGRESS"); env && *env) {
    std::string v = env;
    if (v == "0" || v == "off") return ProgressMode::Off;
    if (v == "1" || v == "bar") return ProgressMode::Bar;
    if (v == "log") return ProgressMode::Log;
  }
  return stderr_is_terminal ? ProgressMode::Bar : ProgressMode::Log;
}

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A terminal that can show the eighth blocks: a UTF-8 locale in the environment.
bool utf8_locale() {
  for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(var);
    if (!v || !*v) continue;
    std::string s = v;
    return s.find("UTF-8") != std::string::npos || s.find("utf8") != std::string::npos ||
           s.find("utf-8") != std::string::npos || s.find("UTF8") != std::string::npos;
  }
  return false;
}

}  // namespace

Progress::Progress(std::string label, std::string short_label)
    : Progress(
          std::move(label), std::move(short_label), progress_mode(isatty(2) != 0), steady_seconds,
          [](const std::string& text) {
            std::fwrite(text.data(), 1, text.size(), stderr);
            std::fflush(stderr);
          },
          [] { return terminal_columns(2); }) {
  unicode_ = utf8_locale();
}

Progress::Progress(std::string label, std::string short_label, ProgressMode mode, Clock clock,
                   Sink sink, Columns columns, double log_interval_s)
    : label_(std::move(label)),
      short_label_(std::move(short_label)),
      mode_(mode),
      clock_(std::move(clock)),
      sink_(std::move(sink)),
      columns_(std::move(columns)),
      schedule_(log_interval_s),
      start_s_(clock_()) {}

ProgressState Progress::state_at(size_t done, size_t total, int64_t tokens) const {
  return {label_, short_label_, done, total, clock_() - start_s_, tokens};
}

void Progress::update(size_t done, size_t total, int64_t tokens) {
  if (mode_ == ProgressMode::Off || total == 0) return;
  const double now = clock_();
  if (mode_ == ProgressMode::Log) {
    if (schedule_.due(done, total, now))
      sink_(format_progress_log(state_at(done, total, tokens)) + "\n");
    return;
  }
  // At most five redraws a second, and always the last one.
  if (done < total && last_draw_s_ >= 0 && now - last_draw_s_ < 0.2) return;
  last_draw_s_ = now;
  // The width is read at every redraw: a resized terminal gets lines of its new width. "\x1b[K"
  // clears what a longer earlier line left.
  sink_("\r" + format_progress_bar(state_at(done, total, tokens), columns_(), unicode_) + "\x1b[K");
  shown_ = true;
}

void Progress::finish() {
  if (shown_) sink_("\n");
  shown_ = false;
}

}  // namespace lmeval

// The progress bar of every backend: requests done, rate, tokens/s where the backend counts
// tokens, elapsed time and ETA on stderr (only when stderr is a terminal or LMEVAL_PROGRESS=1, so
// logs of batch jobs stay clean).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace lmeval {

class Progress {
 public:
  explicit Progress(std::string label) : label_(std::move(label)), start_(clock::now()) {
    const char* env = std::getenv("LMEVAL_PROGRESS");
    enabled_ = env ? std::string(env) == "1" : isatty(2) != 0;
  }
  void update(size_t done, size_t total, int64_t tokens = -1) {
    if (!enabled_ || total == 0) return;
    auto now = clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    int width = 30;
    int filled = static_cast<int>(width * static_cast<double>(done) / static_cast<double>(total));
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(static_cast<size_t>(width), '.');
    std::string toks;
    if (tokens >= 0 && secs > 0)
      toks = ", " + std::to_string(static_cast<long long>(static_cast<double>(tokens) / secs)) +
             " tok/s";
    std::fprintf(stderr, "\r%s [%s] %zu/%zu (%.1f req/s%s, %.0fs elapsed, ETA %.0fs)  ",
                 label_.c_str(), bar.c_str(), done, total, rate, toks.c_str(), secs, eta);
    shown_ = true;
  }
  void finish() {
    if (shown_) std::fputc('\n', stderr);
    shown_ = false;
  }

 private:
  using clock = std::chrono::steady_clock;
  std::string label_;
  clock::time_point start_;
  clock::time_point last_{};
  bool enabled_ = false;
  bool shown_ = false;
};

}  // namespace lmeval

// POSTs many JSON bodies to one URL with libcurl multi: a bounded number in flight, retries with
// exponential backoff and jitter, and a caller-supplied judge of each answer.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lmeval::api {

// One answer from the server, or the transport failure that stood in for it.
struct HttpResponse {
  long status = 0;  // HTTP status; 0 when no complete answer arrived
  std::string body;
  std::string transport_error;  // curl's message (timeout, connection cut, refused); empty if none
  std::optional<double> retry_after_s;  // a Retry-After header in seconds, when sent
  size_t max_body = 0;                  // HttpClientOptions::max_answer_bytes of its request
  bool too_large = false;               // the body passed max_body: the transfer was cut there
};

// The reference retries with tenacity's wait_exponential(multiplier=0.5, min=1, max=10) and
// stop_after_attempt(max_retries): attempt k (1-based) that fails waits
// clamp(multiplier * 2^(k-1), min, max) before attempt k+1. Jitter spreads the waits of many
// requests failing together (a 429 burst) over [wait, wait * (1 + jitter)].
struct RetryPolicy {
  int max_attempts = 3;
  double multiplier_s = 0.5;
  double min_wait_s = 1.0;
  double max_wait_s = 10.0;
  double jitter = 0.25;
  // Attempts in all when the failures are 429s (rate limits); 0: max_attempts. A backend whose
  // reference retries rate limits longer than other failures sets it.
  int rate_limited_attempts = 0;
  // Seconds to wait after failed attempt `attempt` (1-based), before jitter.
  double wait_s(int attempt) const;
};

struct HttpClientOptions {
  size_t max_in_flight = 1;
  double timeout_s = 300;  // whole request (aiohttp ClientTimeout(total=...))
  bool verify_certificate = true;
  std::string ca_cert_path;
  std::vector<std::string> headers;  // "Name: value"
  RetryPolicy retry;
  // One answer's body at most (a server sending gigabytes, or an endless chunked body, fails
  // once here instead of filling memory; not retried). Completions with logprobs of a batch of
  // long prompts stay far below it.
  size_t max_answer_bytes = size_t{256} << 20;
};

// What the caller makes of one answer.
struct Verdict {
  enum Kind { kDone, kRetry, kFail } kind = kDone;
  std::string message;  // why, for kRetry and kFail
  static Verdict done() { return {kDone, {}}; }
  static Verdict retry(std::string why) { return {kRetry, std::move(why)}; }
  static Verdict fail(std::string why) { return {kFail, std::move(why)}; }
};

// A request that did not end in kDone: its index and the last reason, with the attempt count.
struct HttpFailure {
  size_t index = 0;
  int attempts = 0;
  std::string message;
};

using JudgeFn = std::function<Verdict(size_t index, const HttpResponse& response)>;
using RetryLogFn =
    std::function<void(size_t index, int attempt, double wait_s, const std::string& why)>;

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends bodies[i] for every i, at most max_in_flight at once, in index order. `judge` runs on
  // the calling thread for every answer. After the first failure no new request starts, but those
  // in flight are finished and judged, so no finished answer is thrown away. Returns the failures
  // (empty when every request ended in kDone).
  std::vector<HttpFailure> post_all(const std::string& url, const std::vector<std::string>& bodies,
                                    const JudgeFn& judge, const RetryLogFn& on_retry = {});

  const HttpClientOptions& options() const { return options_; }

 private:
  struct Impl;
  HttpClientOptions options_;
  Impl* impl_;
};

// The standard verdict for transport and HTTP status: retry on timeouts, cut or refused
// connections, 408, 429 and 5xx; fail at once on other 4xx (a bad request stays bad); nullopt
// when the answer is a 2xx whose body the caller must judge.
std::optional<Verdict> judge_transport(const HttpResponse& response);

}  // namespace lmeval::api

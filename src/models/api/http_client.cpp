// The libcurl multi loop behind HttpClient: one thread, curl_multi_poll for waiting, a queue of
// fresh requests and a timetable of retries.
#include "lmeval/models/api/http_client.hpp"

#include <curl/curl.h>

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval::api {

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<HttpResponse*>(user);
  if (r->max_body && r->body.size() + size * n > r->max_body) {
    r->too_large = true;
    return 0;  // CURLE_WRITE_ERROR: the transfer ends here
  }
  r->body.append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i)
      match = std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
    if (match) {
      std::string v(line.substr(kName.size()));
      char* end = nullptr;
      double s = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && std::isfinite(s) && s >= 0)
        static_cast<HttpResponse*>(user)->retry_after_s = s;
    }
  }
  return size * n;
}

}  // namespace

double RetryPolicy::wait_s(int attempt) const {
  double w = multiplier_s * std::pow(2.0, attempt - 1);
  return std::max(min_wait_s, std::min(w, max_wait_s));
}

std::optional<Verdict> judge_transport(const HttpResponse& r) {
  if (r.too_large) return Verdict::fail(r.transport_error);
  if (!r.transport_error.empty()) return Verdict::retry(r.transport_error);
  if (r.status >= 200 && r.status < 300) return std::nullopt;
  std::string body = r.body.size() > 300 ? r.body.substr(0, 300) + "..." : r.body;
  std::string why = "HTTP " + std::to_string(r.status) + (body.empty() ? "" : ": " + body);
  if (r.status == 408 || r.status == 429 || r.status >= 500) return Verdict::retry(why);
  return Verdict::fail(why);
}

struct HttpClient::Impl {
  struct Transfer {
    CURL* easy = nullptr;
    size_t index = 0;
    int attempt = 0;
    HttpResponse response;
    char error[CURL_ERROR_SIZE] = {0};
  };

  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;
  std::vector<CURL*>
      idle;  // easy handles kept for reuse (their connections stay in the multi's cache)
  std::mt19937_64 rng{std::random_device{}()};

  CURL* take_easy() {
    if (!idle.empty()) {
      CURL* e = idle.back();
      idle.pop_back();
      return e;
    }
    return curl_easy_init();
  }

  ~Impl() {
    for (CURL* e : idle) curl_easy_cleanup(e);
    if (headers) curl_slist_free_all(headers);
    if (multi) curl_multi_cleanup(multi);
  }
};

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)), impl_(new Impl) {
  global_init();
  if (options_.max_in_flight == 0) options_.max_in_flight = 1;
  impl_->multi = curl_multi_init();
  if (!impl_->multi) throw RuntimeError("libcurl: curl_multi_init failed");
  curl_multi_setopt(impl_->multi, CURLMOPT_MAXCONNECTS,
                    static_cast<long>(options_.max_in_flight + 4));
  // No "Expect: 100-continue" round trip for large bodies: servers answer POSTs directly.
  impl_->headers = curl_slist_append(impl_->headers, "Expect:");
  // JSON unless the caller names another type (a form-encoded token exchange).
  const bool typed = std::any_of(options_.headers.begin(), options_.headers.end(), [](auto& h) {
    return h.size() >= 13 && strncasecmp(h.c_str(), "Content-Type:", 13) == 0;
  });
  if (!typed) impl_->headers = curl_slist_append(impl_->headers, "Content-Type: application/json");
  for (const auto& h : options_.headers)
    impl_->headers = curl_slist_append(impl_->headers, h.c_str());
}

HttpClient::~HttpClient() { delete impl_; }

namespace {

void setup_easy(CURL* e, const HttpClientOptions& o, curl_slist* headers, const std::string& url,
                HttpResponse* response, char* errbuf) {
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  response->max_body = o.max_answer_bytes;
  curl_easy_setopt(e, CURLOPT_WRITEDATA, response);
  // http(s) only, whatever the URL says (base_url is checked too; no redirects are followed).
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, response);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(o.timeout_s, 30.0) * 1000));
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  if (!o.verify_certificate) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!o.ca_cert_path.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, o.ca_cert_path.c_str());
  }
}

void finish(CURL* e, CURLcode code, HttpResponse& r, const char* errbuf) {
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  r.status = status;
  if (r.too_large) {
    const std::string limit = r.max_body >= (size_t{1} << 20)
                                  ? std::to_string(r.max_body >> 20) + " MiB"
                                  : std::to_string(r.max_body) + " bytes";
    r.transport_error =
        "the answer is larger than " + limit + ", lm-eval's limit for one HTTP answer (cut there)";
    r.body.clear();
    r.body.shrink_to_fit();
    r.status = 0;
  } else if (code != CURLE_OK) {
    r.transport_error = curl_easy_strerror(code);
    if (errbuf[0]) r.transport_error += std::string(" (") + errbuf + ")";
    r.status = 0;
  }
}

}  // namespace

std::vector<HttpFailure> HttpClient::post_all(const std::string& url,
                                              const std::vector<std::string>& bodies,
                                              const JudgeFn& judge, const RetryLogFn& on_retry) {
  Impl& im = *impl_;
  std::vector<HttpFailure> failures;
  std::deque<size_t> fresh;
  for (size_t i = 0; i < bodies.size(); ++i) fresh.push_back(i);
  std::multimap<Clock::time_point, std::pair<size_t, int>> delayed;  // -> (index, attempts so far)
  std::map<CURL*, std::unique_ptr<Impl::Transfer>> active;
  bool stopped = false;
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  auto launch = [&](size_t index, int attempt) {
    auto t = std::make_unique<Impl::Transfer>();
    t->easy = im.take_easy();
    t->index = index;
    t->attempt = attempt;
    setup_easy(t->easy, options_, im.headers, url, &t->response, t->error);
    curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, bodies[index].data());
    curl_easy_setopt(t->easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(bodies[index].size()));
    curl_multi_add_handle(im.multi, t->easy);
    active.emplace(t->easy, std::move(t));
  };

  try {
    while (true) {
      // A stop signal (core/stop_signal.hpp) ends the wait for a slow server within a second; the
      // transfers in flight are dropped below.
      throw_if_stopped();
      const auto now = Clock::now();
      while (!stopped && active.size() < options_.max_in_flight) {
        if (!delayed.empty() && delayed.begin()->first <= now) {
          auto [index, attempts] = delayed.begin()->second;
          delayed.erase(delayed.begin());
          launch(index, attempts + 1);
        } else if (!fresh.empty() && active.size() + delayed.size() < options_.max_in_flight) {
          // A request waiting to retry keeps its slot: a struggling server (429, 5xx) gets no
          // more load than num_concurrent, and a dead one fails after one request's retries.
          launch(fresh.front(), 1);
          fresh.pop_front();
        } else {
          break;
        }
      }
      if (active.empty() && (stopped || (fresh.empty() && delayed.empty()))) break;

      int running = 0;
      curl_multi_perform(im.multi, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(im.multi, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* e = msg->easy_handle;
        auto it = active.find(e);
        if (it == active.end()) continue;
        std::unique_ptr<Impl::Transfer> t = std::move(it->second);
        active.erase(it);
        curl_multi_remove_handle(im.multi, e);
        finish(e, msg->data.result, t->response, t->error);
        im.idle.push_back(e);
        Verdict v = judge_transport(t->response).value_or(Verdict::done());
        if (v.kind == Verdict::kDone) v = judge(t->index, t->response);
        const int cap = t->response.status == 429 && options_.retry.rate_limited_attempts > 0
                            ? options_.retry.rate_limited_attempts
                            : options_.retry.max_attempts;
        if (v.kind == Verdict::kRetry && t->attempt < cap && !stopped) {
          double wait = options_.retry.wait_s(t->attempt);
          if (t->response.retry_after_s)
            wait = std::max(wait, std::min(*t->response.retry_after_s, 60.0));
          wait *= 1.0 + options_.retry.jitter * unit(im.rng);
          if (on_retry) on_retry(t->index, t->attempt, wait, v.message);
          delayed.emplace(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(wait)),
                          std::make_pair(t->index, t->attempt));
        } else if (v.kind != Verdict::kDone) {
          failures.push_back({t->index, t->attempt, v.message});
          stopped = true;
        }
      }
      if (stopped && active.empty()) break;
      // A slot freed and work waiting: fill it before waiting on the network.
      if (!stopped && active.size() < options_.max_in_flight &&
          ((!fresh.empty() && active.size() + delayed.size() < options_.max_in_flight) ||
           (!delayed.empty() && delayed.begin()->first <= Clock::now())))
        continue;

      // Wait for socket activity, or until the next retry is due.
      int timeout_ms = 1000;
      if (!delayed.empty() && !stopped) {
        auto due = std::chrono::duration_cast<std::chrono::milliseconds>(delayed.begin()->first -
                                                                         Clock::now())
                       .count();
        timeout_ms = static_cast<int>(std::clamp<long long>(due, 0, 1000));
      }
      if (active.empty()) {
        // Nothing in flight: a retry is not yet due (or the top of the loop has work).
        if (!delayed.empty() && timeout_ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      } else {
        curl_multi_poll(im.multi, nullptr, 0, timeout_ms, nullptr);
      }
    }
  } catch (...) {
    for (auto& [e, t] : active) {
      curl_multi_remove_handle(im.multi, e);
      im.idle.push_back(e);
    }
    throw;
  }
  return failures;
}

}  // namespace lmeval::api

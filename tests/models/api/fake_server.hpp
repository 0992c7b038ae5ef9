// A loopback stand-in for an OpenAI-compatible server (cpp-httplib), with fault injection:
// each POST is answered by a test-supplied handler that may delay, fail, cut the body or lie.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval::test {

using Json = nlohmann::ordered_json;

struct FakeReply {
  int status = 200;
  std::string body;
  int delay_ms = 0;
  bool cut = false;      // send half the body, then close the connection
  bool endless = false;  // a chunked body of 1 MiB chunks that never ends (until the client goes)
  std::string retry_after;
};

class FakeServer {
 public:
  // call: 0-based count of POSTs so far (over all paths).
  using Handler = std::function<FakeReply(const std::string& path, const Json& body, int call)>;

  explicit FakeServer(Handler handler, int threads = 8) : handler_(std::move(handler)) {
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      Json body = Json::parse(req.body, nullptr, false);
      if (body.is_discarded()) body = req.body;  // a form or other non-JSON body, as it came
      int call;
      {
        std::lock_guard<std::mutex> lock(mu_);
        call = calls_++;
        bodies_.push_back(body);
        auth_.push_back(req.get_header_value("Authorization"));
        Json h = Json::object();
        for (const auto& [k, v] : req.headers) h[k] = v;
        headers_.push_back(std::move(h));
      }
      FakeReply r = handler_(req.path, body, call);
      if (r.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(r.delay_ms));
      res.status = r.status;
      if (!r.retry_after.empty()) res.set_header("Retry-After", r.retry_after);
      if (r.endless) {
        res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
          static const std::string chunk(1 << 20, ' ');
          return sink.write(chunk.data(), chunk.size());
        });
      } else if (r.cut) {
        auto text = std::make_shared<std::string>(r.body);
        res.set_content_provider(text->size(), "application/json",
                                 [text](size_t offset, size_t, httplib::DataSink& sink) {
                                   if (offset == 0) sink.write(text->data(), text->size() / 2);
                                   return false;  // abort: the client sees a short body
                                 });
      } else {
        res.set_content(r.body, "application/json");
      }
    });
    server_.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      // Headers and body go out in two writes: without TCP_NODELAY (inherited by accepted
      // sockets) Nagle holds the second until the client's delayed ACK, 40 ms per answer.
      int one = 1;
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      listen_fd_ = sock;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Debian's libcpp-httplib listens with a backlog of 5: a burst of connections (64 in flight)
    // would see dropped SYNs and 1 s retransmits. listen() again raises it.
    if (listen_fd_ >= 0) ::listen(listen_fd_, 1024);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  ~FakeServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url(const std::string& path = "/v1/completions") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::vector<Json> bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> auth_headers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }
  // Every request's headers, as sent (names as the client spelled them).
  std::vector<Json> headers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return headers_;
  }

 private:
  Handler handler_;
  httplib::Server server_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::thread thread_;
  mutable std::mutex mu_;
  int calls_ = 0;
  std::vector<Json> bodies_;
  std::vector<std::string> auth_;
  std::vector<Json> headers_;
};

// --- an OpenAI completions "model" for the stand-in ------------------------------------------

// The stand-in's model: token t after token p has log-prob -(1 + (7t + p) % 5) / 4 and the best
// token's is -0.25, so t is greedy exactly when (7t + p) % 5 == 0.
inline double fake_lp(int p, int t) { return -(1 + (7 * t + p) % 5) / 4.0; }

inline Json echo_choice(const std::vector<int>& toks, int index) {
  Json lp = Json::array(), top = Json::array(), names = Json::array();
  lp.push_back(nullptr);
  top.push_back(nullptr);
  names.push_back("t" + std::to_string(toks[0]));
  for (size_t i = 1; i < toks.size(); ++i) {
    double v = fake_lp(toks[i - 1], toks[i]);
    lp.push_back(v);
    Json t = Json::object();
    t["t" + std::to_string(toks[i])] = v;
    t["best"] = -0.25;
    if (v == -0.25) t.erase("best");
    top.push_back(t);
    names.push_back("t" + std::to_string(toks[i]));
  }
  // The one generated token (max_tokens=1): scored by no request, so it must be left out.
  lp.push_back(-9.0);
  top.push_back(Json{{"gen", -9.0}});
  names.push_back("gen");
  return Json{{"index", index},
              {"text", "echo"},
              {"logprobs", {{"tokens", names}, {"token_logprobs", lp}, {"top_logprobs", top}}}};
}

// Answers completions requests: echo+logprobs for loglikelihood, "<n> tokens" (the prompt's length)
// otherwise.
inline FakeReply completions(const Json& body, const Tokenizer* tok) {
  Json prompts = body["prompt"];
  if (!prompts.is_array() || (!prompts.empty() && prompts[0].is_number()))
    prompts = Json::array({prompts});
  Json choices = Json::array();
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int> toks;
    if (prompts[i].is_string()) {
      for (auto t : tok->encode(prompts[i].get<std::string>(), false)) toks.push_back(t);
    } else {
      for (const auto& t : prompts[i]) toks.push_back(t.get<int>());
    }
    if (body.value("echo", false)) {
      choices.push_back(echo_choice(toks, static_cast<int>(i)));
    } else {
      std::string text = std::to_string(toks.size()) + " tokens";
      choices.push_back(Json{{"index", i}, {"text", text}});
    }
  }
  // Choices in reverse order: clients must place them by "index".
  Json rev = Json::array();
  for (size_t i = choices.size(); i-- > 0;) rev.push_back(choices[i]);
  return {200, Json{{"object", "text_completion"}, {"choices", rev}}.dump()};
}

}  // namespace lmeval::test

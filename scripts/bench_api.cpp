// Throughput of the API models' client (not a test): loglikelihood requests through ApiLM
// (tokenize, build the body, libcurl multi, parse the echo answer) against a loopback server that
// answers every request after a fixed latency. Reports requests/s against the ideal
// num_concurrent / latency, and the client thread's CPU time per 100 requests/s.
// Usage: bench_api TOKENIZER_DIR [latency_ms=50] [seconds_per_level=1.5] [levels=1,4,16,64]
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/api/api_lm.hpp"

using namespace lmeval;

namespace {

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// An echo answer for a prompt of n tokens: what a vLLM completions server sends back.
std::string echo_answer(size_t n) {
  std::string lp = "[null", top = "[null", toks = "[\"a\"";
  for (size_t i = 1; i <= n; ++i) {
    lp += ",-1.25";
    top += ",{\"a\":-1.25,\"b\":-0.5}";
    toks += ",\"a\"";
  }
  return "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{"
         "\"index\":0,\"text\":\"x\","
         "\"logprobs\":{\"tokens\":" +
         toks + "],\"token_logprobs\":" + lp + "],\"top_logprobs\":" + top +
         "]},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":" + std::to_string(n) +
         "}}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_api TOKENIZER_DIR [latency_ms] [seconds_per_level] [levels]\n");
    return 2;
  }
  const std::string tok_dir = argv[1];
  const int latency_ms = argc > 2 ? std::stoi(argv[2]) : 50;
  const double seconds = argc > 3 ? std::stod(argv[3]) : 1.5;
  std::vector<int> levels = {1, 4, 16, 64};
  if (argc > 4) {
    levels.clear();
    std::stringstream ss(argv[4]);
    for (std::string x; std::getline(ss, x, ',');) levels.push_back(std::stoi(x));
  }

  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(160); };
  int listen_fd = -1;
  server.set_socket_options([&](socket_t s) {
    httplib::default_socket_options(s);
    int one = 1;
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    listen_fd = s;
  });
  server.Post(".*", [&](const httplib::Request& req, httplib::Response& res) {
    // The prompt's token count: the commas of the one id list, plus one.
    size_t a = req.body.find("[["), b = req.body.find("]]");
    size_t n = 1;
    for (size_t i = a; i < b; ++i) n += req.body[i] == ',';
    std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms));
    res.set_content(echo_answer(n + 1), "application/json");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  if (listen_fd >= 0) ::listen(listen_fd, 1024);  // Debian's httplib listens with a backlog of 5
  std::thread th([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  auto tokenizer = load_tokenizer(tok_dir);
  std::printf(
      "| num_concurrent | requests | seconds | requests/s | ideal | of ideal | client CPU s | %% "
      "of a core per 100 req/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int c : levels) {
    const double ideal = c * 1000.0 / latency_ms;
    const size_t n = std::max<size_t>(20, static_cast<size_t>(ideal * seconds));
    std::vector<LoglikelihoodRequest> reqs;
    for (size_t i = 0; i < n; ++i)
      reqs.push_back(
          {"Once upon a time there was a little girl number " + std::to_string(i) + ". She",
           " went to the park to play with her friends."});
    api::ApiArgs args;
    args.model = "m";
    args.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
    args.tokenizer_backend = "huggingface";
    args.num_concurrent = c;
    api::ApiLM lm(args, load_tokenizer(tok_dir));
    const double cpu0 = thread_cpu_s();
    const auto t0 = std::chrono::steady_clock::now();
    auto res = lm.loglikelihood(reqs);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = thread_cpu_s() - cpu0;
    const double rps = n / wall;
    std::printf("| %d | %zu | %.3f | %.1f | %.0f | %.1f%% | %.3f | %.2f%% |\n", c, n, wall, rps,
                ideal, 100.0 * rps / ideal, cpu, 100.0 * (cpu / wall) / (rps / 100.0));
    std::fflush(stdout);
    if (res.size() != n) return 1;
  }
  server.stop();
  th.join();
  return 0;
}

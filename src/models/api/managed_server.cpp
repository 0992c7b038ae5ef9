// ManagedServer: fork/exec in a new process group, readiness polling with libcurl, group stop.
#include "models/api/managed_server.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include "lmeval/core/child_groups.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/core/stop_signal.hpp"

extern char** environ;

namespace lmeval::api {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw RuntimeError(std::string("no socket for a free port: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw RuntimeError(std::string("no free loopback port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

namespace {

size_t append_body(char* data, size_t size, size_t n, void* out) {
  auto* s = static_cast<std::string*>(out);
  if (s->size() < (size_t{1} << 20)) s->append(data, size * n);
  return size * n;
}

// HTTP status of GET url (0 when nothing answered), within two seconds; the body to *body.
long http_get_status(const std::string& url, std::string* body = nullptr) {
  CURL* c = curl_easy_init();
  if (!c) return 0;
  std::string sink;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, body ? body : &sink);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  return status;
}

std::string joined_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

std::optional<std::string> http_get(const std::string& url) {
  std::string body;
  if (http_get_status(url, &body) != 200) return std::nullopt;
  return body;
}

ManagedServer::ManagedServer(ServerCommand command, int port)
    : cmd_(std::move(command)), port_(port) {
  char tmpl[] = "/tmp/lmeval_server_XXXXXX";
  const int log_fd = ::mkstemp(tmpl);
  if (log_fd < 0) throw RuntimeError(std::string("no log file for the server: ") + strerror(errno));
  log_ = tmpl;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& e : cmd_.env) env_strings.push_back(e);
  std::vector<char*> argv, envp;
  for (auto& a : cmd_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(log_fd);
    throw RuntimeError(std::string("could not start ") + cmd_.what + ": " + strerror(errno));
  }
  if (pid_ == 0) {
    ::setpgid(0, 0);
    // The server ends with lm-eval even when lm-eval is killed outright (SIGKILL).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    // The stop handlers are lm-eval's; the server keeps the default ones.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
    ::execvpe(argv[0], argv.data(), envp.data());
    const std::string msg = std::string("exec ") + argv[0] + ": " + strerror(errno) + "\n";
    ssize_t ignored = ::write(2, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also here, so that a stop right after fork finds the group
  register_child_group(pid_);
  ::close(log_fd);
  spdlog::info("{}: started (pid {}, port {}, log {}): {}", cmd_.what, pid_, port_, log_.string(),
               scrub(joined_argv(cmd_.argv)));
  try {
    wait_ready();
  } catch (...) {
    stop();
    throw;
  }
}

ManagedServer::~ManagedServer() {
  stop();
  std::error_code ec;
  fs::remove(log_, ec);
}

std::string ManagedServer::base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::string ManagedServer::scrub(std::string text) const {
  for (const auto& v : cmd_.secrets) {
    if (v.size() < 4) continue;
    for (size_t p; (p = text.find(v)) != std::string::npos;) text.replace(p, v.size(), "***");
  }
  return mask_secrets(text);
}

std::string ManagedServer::log_tail(size_t lines) const {
  std::ifstream in(log_);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += "  | " + l + "\n";
  return scrub(out);
}

void ManagedServer::wait_ready() {
  const auto start = Clock::now();
  const std::string url = base_url() + cmd_.ready_path;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      unregister_child_group(pid_);
      pid_ = -1;
      const std::string how = WIFEXITED(status)
                                  ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                  : "was killed by " + signal_name(WTERMSIG(status));
      throw RuntimeError(cmd_.what + " " + how + " before it was ready (command: " +
                         scrub(joined_argv(cmd_.argv)) + "); the end of its log:\n" + log_tail());
    }
    if (http_get_status(url) == 200) {
      spdlog::info("{}: ready at {} after {:.1f} s", cmd_.what, base_url(),
                   std::chrono::duration<double>(Clock::now() - start).count());
      return;
    }
    throw_if_stopped();
    if (std::chrono::duration<double>(Clock::now() - start).count() > cmd_.ready_timeout_s)
      throw RuntimeError(cmd_.what + " was not ready at " + url + " within " +
                         std::to_string(static_cast<int64_t>(cmd_.ready_timeout_s)) +
                         " s (model_args server_timeout sets the limit; command: " +
                         scrub(joined_argv(cmd_.argv)) + "); the end of its log:\n" + log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void ManagedServer::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGTERM);
  const auto start = Clock::now();
  int status = 0;
  bool reaped = false;
  while (std::chrono::duration<double>(Clock::now() - start).count() < 15) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The rest of the group (engine workers) goes too, whether or not the leader ended in time.
  ::kill(-pid_, SIGKILL);
  if (!reaped) ::waitpid(pid_, &status, 0);
  unregister_child_group(pid_);
  spdlog::info("{}: stopped", cmd_.what);
  pid_ = -1;
}

}  // namespace lmeval::api

// A loopback stand-in for the Hugging Face Hub (API + resolve routes) with fault injection, for
// tests.
#pragma once

#include "lmeval/core/sha256.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace lmeval::testing {

class FakeHub {
 public:
  struct File {
    std::string content;
    bool lfs = false;  // served like an LFS file: 302 to a CDN route, X-Linked-Etag = sha256
  };
  using Tree = std::map<std::string, File>;
  struct Repo {
    std::map<std::string, std::string> refs;  // branch/tag -> commit
    std::map<std::string, Tree> commits;      // commit -> files
    bool gated = false;
  };
  struct Fault {
    int fail_times = 0;  // answer `status` this many times first
    int status = 500;
    int cut_times = 0;  // then cut the body after `cut_after` bytes this many times
    size_t cut_after = 0;
    int delay_ms = 0;  // every matching request waits this long
    bool ignore_range = false;
  };
  struct Request {
    std::string method, target;
    std::map<std::string, std::string> headers;  // lower-case names
  };

  FakeHub() = default;
  ~FakeHub() { stop(); }

  // kind: "datasets" or "models".
  void add_commit(const std::string& kind, const std::string& id, const std::string& ref,
                  const std::string& commit, Tree files) {
    std::lock_guard<std::mutex> g(mu_);
    Repo& r = repos_[kind + "/" + id];
    r.commits[commit] = std::move(files);
    if (!ref.empty()) r.refs[ref] = commit;
  }
  void set_gated(const std::string& kind, const std::string& id, const std::string& token) {
    std::lock_guard<std::mutex> g(mu_);
    repos_[kind + "/" + id].gated = true;
    token_ = token;
  }
  // Faults apply to requests whose target contains `needle`.
  void add_fault(const std::string& needle, Fault f) {
    std::lock_guard<std::mutex> g(mu_);
    faults_.emplace_back(needle, f);
  }
  std::vector<Request> log() const {
    std::lock_guard<std::mutex> g(mu_);
    return log_;
  }
  size_t request_count() const {
    std::lock_guard<std::mutex> g(mu_);
    return log_.size();
  }

  void start() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("bind");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 64);
    running_ = true;
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  void stop() {
    if (!running_) return;
    running_ = false;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> ws;
    {
      std::lock_guard<std::mutex> g(mu_);
      ws.swap(workers_);
    }
    for (auto& t : ws) t.join();
  }
  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  static std::string git_etag(const std::string& content) {
    return lmeval::sha256_hex("blob " + content).substr(0, 40);
  }
  static std::string lfs_etag(const std::string& content) { return lmeval::sha256_hex(content); }

 private:
  void accept_loop() {
    while (running_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        if (!running_) return;
        continue;
      }
      std::lock_guard<std::mutex> g(mu_);
      workers_.emplace_back([this, c] {
        handle(c);
        ::close(c);
      });
    }
  }

  static std::string url_decode(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  static void send_all(int c, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

  struct Reply {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool head = false;
    size_t cut = std::string::npos;
  };

  void send_reply(int c, const Reply& r) {
    static const std::map<int, std::string> reason = {{200, "OK"},
                                                      {206, "Partial Content"},
                                                      {302, "Found"},
                                                      {401, "Unauthorized"},
                                                      {404, "Not Found"},
                                                      {416, "Range Not Satisfiable"},
                                                      {429, "Too Many Requests"},
                                                      {500, "Internal Server Error"},
                                                      {503, "Service Unavailable"}};
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " +
                      (reason.count(r.status) ? reason.at(r.status) : "X") + "\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n";
    if (!r.head) out += r.cut == std::string::npos ? r.body : r.body.substr(0, r.cut);
    send_all(c, out);
  }

  void handle(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
      if (req.size() > 65536) return;
    }
    Request rq;
    size_t eol = req.find("\r\n");
    std::string line = req.substr(0, eol);
    size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    rq.method = line.substr(0, sp1);
    rq.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = eol + 2;
    while (true) {
      size_t e = req.find("\r\n", pos);
      if (e == std::string::npos || e == pos) break;
      std::string h = req.substr(pos, e - pos);
      size_t colon = h.find(':');
      if (colon != std::string::npos) {
        std::string k = h.substr(0, colon);
        for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        size_t vs = colon + 1;
        while (vs < h.size() && h[vs] == ' ') ++vs;
        rq.headers[k] = h.substr(vs);
      }
      pos = e + 2;
    }
    Fault fault;
    bool faulted = false;
    {
      std::lock_guard<std::mutex> g(mu_);
      log_.push_back(rq);
      for (auto& [needle, f] : faults_) {
        if (rq.target.find(needle) == std::string::npos) continue;
        if (f.delay_ms) fault.delay_ms = f.delay_ms;
        fault.ignore_range |= f.ignore_range;
        if (f.fail_times > 0) {
          --f.fail_times;
          fault.status = f.status;
          fault.fail_times = 1;
          faulted = true;
        } else if (f.cut_times > 0 && rq.method == "GET") {
          --f.cut_times;
          fault.cut_times = 1;
          fault.cut_after = f.cut_after;
        }
      }
    }
    if (fault.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(fault.delay_ms));
    Reply r;
    r.head = rq.method == "HEAD";
    if (faulted) {
      r.status = fault.status;
      if (fault.status == 429) r.headers.emplace_back("Retry-After", "0");
      r.body = "{\"error\":\"injected\"}";
      send_reply(c, r);
      return;
    }
    route(rq, r, fault);
    send_reply(c, r);
  }

  void not_found(Reply& r, const char* code) {
    r.status = 404;
    r.headers.emplace_back("X-Error-Code", code);
    r.body = std::string("{\"error\":\"") + code + "\"}";
  }

  void serve_bytes(const Request& rq, Reply& r, const std::string& content, const Fault& fault) {
    size_t start = 0;
    auto it = rq.headers.find("range");
    if (it != rq.headers.end() && !fault.ignore_range && it->second.rfind("bytes=", 0) == 0) {
      start = std::stoull(it->second.substr(6));
      if (start >= content.size()) {
        r.status = 416;
        return;
      }
      r.status = 206;
      r.headers.emplace_back("Content-Range", "bytes " + std::to_string(start) + "-" +
                                                  std::to_string(content.size() - 1) + "/" +
                                                  std::to_string(content.size()));
    }
    r.body = content.substr(start);
    if (fault.cut_times) r.cut = fault.cut_after;
  }

  void route(const Request& rq, Reply& r, const Fault& fault) {
    std::string t = rq.target;
    std::lock_guard<std::mutex> g(mu_);
    if (t.rfind("/cdn/", 0) == 0) {
      std::string sha = t.substr(5);
      for (auto& [k, repo] : repos_)
        for (auto& [c, tree] : repo.commits)
          for (auto& [p, f] : tree)
            if (f.lfs && lfs_etag(f.content) == sha) {
              serve_bytes(rq, r, f.content, fault);
              return;
            }
      not_found(r, "EntryNotFound");
      return;
    }
    bool api = t.rfind("/api/", 0) == 0;
    std::string rest = api ? t.substr(5) : t.substr(1);
    std::string kind = "models";
    if (rest.rfind("datasets/", 0) == 0) {
      kind = "datasets";
      rest = rest.substr(9);
    } else if (api && rest.rfind("models/", 0) == 0) {
      rest = rest.substr(7);
    }
    std::string marker = api ? "/revision/" : "/resolve/";
    size_t m = rest.find(marker);
    if (m == std::string::npos) {
      not_found(r, "RepoNotFound");
      return;
    }
    std::string id = url_decode(rest.substr(0, m));
    std::string after = rest.substr(m + marker.size());
    std::string rev_enc = api ? after : after.substr(0, after.find('/'));
    std::string path = api ? ""
                           : (after.find('/') == std::string::npos
                                  ? ""
                                  : url_decode(after.substr(after.find('/') + 1)));
    std::string rev = url_decode(rev_enc);
    auto rit = repos_.find(kind + "/" + id);
    if (rit == repos_.end()) {
      not_found(r, "RepoNotFound");
      return;
    }
    Repo& repo = rit->second;
    if (repo.gated) {
      auto a = rq.headers.find("authorization");
      if (a == rq.headers.end() || a->second != "Bearer " + token_) {
        r.status = 401;
        r.headers.emplace_back("X-Error-Code", "GatedRepo");
        r.body = "{\"error\":\"gated\"}";
        return;
      }
    }
    std::string commit = repo.refs.count(rev) ? repo.refs[rev] : rev;
    auto cit = repo.commits.find(commit);
    if (cit == repo.commits.end()) {
      not_found(r, "RevisionNotFound");
      return;
    }
    if (api) {
      nlohmann::json j;
      j["id"] = id;
      j["sha"] = commit;
      j["siblings"] = nlohmann::json::array();
      for (auto& [p, f] : cit->second) j["siblings"].push_back({{"rfilename", p}});
      r.body = j.dump();
      r.headers.emplace_back("Content-Type", "application/json");
      return;
    }
    auto fit = cit->second.find(path);
    if (fit == cit->second.end()) {
      not_found(r, "EntryNotFound");
      return;
    }
    const File& f = fit->second;
    r.headers.emplace_back("X-Repo-Commit", commit);
    if (f.lfs) {
      r.status = 302;
      // Another host, like the Hub's CDN links: clients must not follow it for HEAD.
      r.headers.emplace_back(
          "Location", "http://localhost:" + std::to_string(port_) + "/cdn/" + lfs_etag(f.content));
      r.headers.emplace_back("X-Linked-Etag", "\"" + lfs_etag(f.content) + "\"");
      r.headers.emplace_back("X-Linked-Size", std::to_string(f.content.size()));
      r.headers.emplace_back("ETag", "\"" + git_etag(f.content) + "\"");
      return;
    }
    r.headers.emplace_back("ETag", "\"" + git_etag(f.content) + "\"");
    serve_bytes(rq, r, f.content, fault);
  }

  mutable std::mutex mu_;
  std::map<std::string, Repo> repos_;
  std::vector<std::pair<std::string, Fault>> faults_;
  std::vector<Request> log_;
  std::string token_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> running_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace lmeval::testing

// A loopback stand-in for the Hugging Face Hub's write API (cpp-httplib): whoami, repo creation,
// preupload, the NDJSON commit, the LFS batch/upload/verify routes, the settings PUT, listings and
// resolve. It keeps the repos' files and records every request (method, path, Authorization,
// body) for tests of the results push.
#pragma once

#include <httplib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace lmeval::testing {

class FakeHubWriter {
 public:
  using Json = nlohmann::ordered_json;
  struct Request {
    std::string method, path, authorization, body, content_type;
  };
  struct Commit {
    std::string repo, summary;
    std::vector<std::string> files;  // in payload order
  };

  // Files of at least `lfs_from` bytes go through LFS (preupload answers "lfs").
  explicit FakeHubWriter(std::string token, size_t lfs_from = size_t(10) << 20)
      : token_(std::move(token)), lfs_from_(lfs_from) {
    const std::string repo = R"(([^/]+/[^/]+))";
    server_.Get("/api/whoami-v2", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      r.set_content(R"({"name": "tester", "type": "user"})", "application/json");
    });
    server_.Post("/api/repos/create", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      Json j = Json::parse(q.body);
      std::string id =
          (j["organization"].is_string() ? j["organization"].template get<std::string>() + "/"
                                         : "") +
          j["name"].template get<std::string>();
      std::lock_guard<std::mutex> g(mu_);
      created_.push_back({id, j.value("visibility", "")});
      if (repos_.count(id)) {
        r.status = 409;
        r.set_content(R"({"error": "You already created this dataset repo"})", "application/json");
        return;
      }
      repos_[id];
      r.set_content(R"({"url": "x"})", "application/json");
    });
    server_.Post("/api/datasets/" + repo + "/preupload/main", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      Json j = Json::parse(q.body), files = Json::array();
      for (const auto& f : j["files"])
        files.push_back(
            {{"path", f["path"]},
             {"uploadMode", f["size"].template get<size_t>() >= lfs_from_ ? "lfs" : "regular"},
             {"shouldIgnore", false}});
      r.set_content(Json{{"files", files}}.dump(), "application/json");
    });
    server_.Post("/api/datasets/" + repo + "/commit/main", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      std::string id = q.matches[1];
      std::lock_guard<std::mutex> g(mu_);
      if (!repos_.count(id)) {
        r.status = 404;
        r.set_content(R"({"error": "Repository not found"})", "application/json");
        return;
      }
      Commit c{id, "", {}};
      std::istringstream in(q.body);
      for (std::string line; std::getline(in, line);) {
        Json j = Json::parse(line);
        const Json& v = j["value"];
        if (j["key"] == "header") c.summary = v["summary"];
        if (j["key"] == "file") {
          repos_[id][v["path"]] = base64_decode(v["content"]);
          c.files.push_back(v["path"]);
        }
        if (j["key"] == "lfsFile") {
          repos_[id][v["path"]] = lfs_store_.at(v["oid"]);
          c.files.push_back(v["path"]);
        }
      }
      commits_.push_back(c);
      r.set_content(R"({"commitOid": "0123456789abcdef0123456789abcdef01234567"})",
                    "application/json");
    });
    server_.Post("/datasets/" + repo + R"(\.git/info/lfs/objects/batch)",
                 [this](const auto& q, auto& r) {
                   if (!record(q, r)) return;
                   Json j = Json::parse(q.body), objects = Json::array();
                   for (const auto& o : j["objects"]) {
                     std::string oid = o["oid"];
                     objects.push_back({{"oid", oid},
                                        {"size", o["size"]},
                                        {"actions",
                                         {{"upload",
                                           {{"href", endpoint() + "/lfs-store/" + oid},
                                            {"header", {{"X-Upload-Signature", "sig"}}}}},
                                          {"verify", {{"href", endpoint() + "/lfs-verify"}}}}}});
                   }
                   r.set_content(Json{{"transfer", "basic"}, {"objects", objects}}.dump(),
                                 "application/vnd.git-lfs+json");
                 });
    server_.Put(R"(/lfs-store/([0-9a-f]+))", [this](const auto& q, auto& r) {
      record(q, r, false);
      std::lock_guard<std::mutex> g(mu_);
      lfs_store_[q.matches[1]] = q.body;
    });
    server_.Post("/lfs-verify", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      r.set_content("{}", "application/json");
    });
    server_.Put("/api/datasets/" + repo + "/settings", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      std::lock_guard<std::mutex> g(mu_);
      gated_.push_back(q.matches[1]);
      r.set_content("{}", "application/json");
    });
    server_.Get("/api/datasets/" + repo + "/revision/main", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      std::lock_guard<std::mutex> g(mu_);
      Json siblings = Json::array();
      for (const auto& [path, content] : repos_[q.matches[1]])
        siblings.push_back({{"rfilename", path}});
      r.set_content(
          Json{{"sha", "0123456789abcdef0123456789abcdef01234567"}, {"siblings", siblings}}.dump(),
          "application/json");
    });
    server_.Get("/datasets/" + repo + "/resolve/main/(.+)", [this](const auto& q, auto& r) {
      if (!record(q, r)) return;
      std::lock_guard<std::mutex> g(mu_);
      auto& files = repos_[q.matches[1]];
      auto it = files.find(q.matches[2]);
      if (it == files.end()) {
        r.status = 404;
        return;
      }
      r.set_content(it->second, "application/octet-stream");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeHubWriter() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  FakeHubWriter(const FakeHubWriter&) = delete;
  FakeHubWriter& operator=(const FakeHubWriter&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Requests whose path contains `needle` are answered `status` (with a body naming the token
  // the request carried, as a careless server might echo it).
  void fail(const std::string& needle, int status) {
    std::lock_guard<std::mutex> g(mu_);
    faults_[needle] = status;
  }

  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> g(mu_);
    return requests_;
  }
  std::vector<Commit> commits() const {
    std::lock_guard<std::mutex> g(mu_);
    return commits_;
  }
  std::vector<std::pair<std::string, std::string>> created() const {
    std::lock_guard<std::mutex> g(mu_);
    return created_;
  }
  std::vector<std::string> gated() const {
    std::lock_guard<std::mutex> g(mu_);
    return gated_;
  }
  std::map<std::string, std::string> files(const std::string& repo) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = repos_.find(repo);
    return it == repos_.end() ? std::map<std::string, std::string>{} : it->second;
  }

  static std::string base64_decode(const std::string& s) {
    static const std::string abc =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t v = 0;
    int bits = 0;
    for (char c : s) {
      if (c == '=') break;
      v = (v << 6) | static_cast<uint32_t>(abc.find(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += static_cast<char>((v >> bits) & 0xFF);
      }
    }
    return out;
  }

 private:
  // Records the request; false (and a 401 or injected status sent) when it must not go on.
  bool record(const httplib::Request& q, httplib::Response& r, bool needs_token = true) {
    std::lock_guard<std::mutex> g(mu_);
    requests_.push_back({q.method, q.path, q.get_header_value("Authorization"), q.body,
                         q.get_header_value("Content-Type")});
    for (const auto& [needle, status] : faults_)
      if (q.path.find(needle) != std::string::npos) {
        r.status = status;
        r.set_content("{\"error\": \"refused " + q.get_header_value("Authorization") + "\"}",
                      "application/json");
        return false;
      }
    if (needs_token && q.get_header_value("Authorization") != "Bearer " + token_) {
      r.status = 401;
      r.set_content(R"({"error": "Invalid credentials in Authorization header"})",
                    "application/json");
      return false;
    }
    return true;
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::string token_;
  size_t lfs_from_;
  mutable std::mutex mu_;
  std::vector<Request> requests_;
  std::vector<Commit> commits_;
  std::vector<std::pair<std::string, std::string>> created_;
  std::vector<std::string> gated_;
  std::map<std::string, std::map<std::string, std::string>> repos_;
  std::map<std::string, std::string> lfs_store_;
  std::map<std::string, int> faults_;
};

}  // namespace lmeval::testing

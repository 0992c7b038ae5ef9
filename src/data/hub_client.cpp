// Hugging Face Hub client over libcurl with a huggingface_hub-compatible cache
// (blobs/refs/snapshots).
#include "lmeval/data/hub_client.hpp"

#include "lmeval/core/atomic_file.hpp"
#include "lmeval/core/error.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace fs = std::filesystem;

namespace lmeval::hub {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool env_true(const char* name) {
  std::string v = env(name);
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string read_small_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string type_word(RepoType t) { return t == RepoType::kDataset ? "dataset" : "model"; }

// The etag a blob is stored under: quotes and weak prefix removed, as huggingface_hub does.
std::string normalize_etag(std::string e) {
  e = trim(e);
  if (e.rfind("W/", 0) == 0) e = e.substr(2);
  if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
  return e;
}

// Blob names come from the server: keep them to a safe alphabet.
bool safe_blob_name(const std::string& e) {
  if (e.empty() || e.size() > 200) return false;
  return std::all_of(
             e.begin(), e.end(),
             [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; }) &&
         e != "." && e != "..";
}

// Repo paths must stay inside the snapshot.
bool safe_repo_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string::npos) return false;
  for (const auto& part : fs::path(p))
    if (part == ".." || part == ".") return false;
  return true;
}

void curl_global() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct FileLock {
  int fd = -1;
  explicit FileLock(const fs::path& p) {
    fs::create_directories(p.parent_path());
    fd = ::open(p.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd >= 0) ::flock(fd, LOCK_EX);
  }
  ~FileLock() {
    if (fd >= 0) {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
  }
};

}  // namespace

std::string url_quote(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool is_commit_hash(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

std::string repo_folder_name(const RepoRef& repo) {
  std::string id = repo.id;
  std::string out = repo.type == RepoType::kDataset ? "datasets" : "models";
  size_t start = 0;
  while (true) {
    size_t slash = id.find('/', start);
    out += "--" + id.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

HubConfig HubConfig::from_env(bool datasets) {
  HubConfig c;
  std::string ep = env("HF_ENDPOINT");
  if (!ep.empty()) c.endpoint = ep;
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  fs::path home = env("HOME").empty() ? fs::path("/tmp") : fs::path(env("HOME"));
  fs::path hf_home = !env("HF_HOME").empty() ? fs::path(env("HF_HOME"))
                     : !env("XDG_CACHE_HOME").empty()
                         ? fs::path(env("XDG_CACHE_HOME")) / "huggingface"
                         : home / ".cache" / "huggingface";
  if (!env("HF_HUB_CACHE").empty())
    c.cache_dir = env("HF_HUB_CACHE");
  else if (!env("HUGGINGFACE_HUB_CACHE").empty())
    c.cache_dir = env("HUGGINGFACE_HUB_CACHE");
  else
    c.cache_dir = hf_home / "hub";
  for (const char* var : {"HF_TOKEN", "HF_HUB_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    std::string t = trim(env(var));
    if (!t.empty()) {
      c.token = t;
      break;
    }
  }
  if (!c.token) {
    fs::path tp =
        !env("HF_TOKEN_PATH").empty() ? fs::path(env("HF_TOKEN_PATH")) : hf_home / "token";
    std::string t = trim(read_small_file(tp));
    if (!t.empty()) c.token = t;
  }
  c.offline = env_true("HF_HUB_OFFLINE") || (datasets && env_true("HF_DATASETS_OFFLINE"));
  c.progress = ::isatty(STDERR_FILENO) != 0;
  return c;
}

struct HubClient::Response {
  long status = 0;
  CURLcode curl = CURLE_OK;
  std::string curl_error;
  std::map<std::string, std::string> headers;  // lower-case names, of the final response
  std::string body;
  bool transport_failed() const { return curl != CURLE_OK; }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

HubClient::HubClient(HubConfig config) : config_(std::move(config)) { curl_global(); }
HubClient::~HubClient() = default;

std::string HubClient::scrub(std::string text) const {
  if (!config_.token || config_.token->empty()) return text;
  const std::string& t = *config_.token;
  for (size_t p; (p = text.find(t)) != std::string::npos;) text.replace(p, t.size(), "***");
  return text;
}

fs::path HubClient::repo_cache_dir(const RepoRef& repo) const {
  return config_.cache_dir / repo_folder_name(repo);
}

fs::path HubClient::snapshot_dir(const RepoRef& repo, const std::string& commit) const {
  return repo_cache_dir(repo) / "snapshots" / commit;
}

std::string HubClient::api_url(const RepoRef& repo) const {
  return config_.endpoint + "/api/" + (repo.type == RepoType::kDataset ? "datasets/" : "models/") +
         url_quote(repo.id, true) + "/revision/" + url_quote(repo.revision, false);
}

std::string HubClient::resolve_url(const RepoRef& repo, const std::string& revision,
                                   const std::string& filename) const {
  return config_.endpoint + "/" + (repo.type == RepoType::kDataset ? "datasets/" : "") +
         url_quote(repo.id, true) + "/resolve/" + url_quote(revision, false) + "/" +
         url_quote(filename, true);
}

namespace {

size_t write_string(char* p, size_t size, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, size * n);
  return size * n;
}

struct HeaderState {
  std::map<std::string, std::string>* headers;
};

size_t on_header(char* p, size_t size, size_t n, void* ud) {
  auto* h = static_cast<std::map<std::string, std::string>*>(ud);
  std::string line(p, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    h->clear();  // a new response (after a redirect or 100-continue)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    (*h)[name] = trim(line.substr(colon + 1));
  }
  return size * n;
}

struct Progress {
  bool enabled = false;
  std::string label;
  uint64_t offset = 0;
  std::chrono::steady_clock::time_point last{};
  bool drawn = false;
};

int on_progress(void* ud, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* pr = static_cast<Progress*>(ud);
  // Only large transfers get a bar (config files and small shards would just flicker).
  if (!pr->enabled || total <= 0 || static_cast<uint64_t>(total) + pr->offset < (10u << 20))
    return 0;
  auto t = std::chrono::steady_clock::now();
  if (now != total && t - pr->last < std::chrono::milliseconds(200)) return 0;
  pr->last = t;
  double frac = static_cast<double>(now + pr->offset) / static_cast<double>(total + pr->offset);
  int width = 30, filled = static_cast<int>(frac * width);
  std::fprintf(stderr, "\r%s [%s%s] %5.1f%% %.1f/%.1f MB", pr->label.c_str(),
               std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
               frac * 100, (now + pr->offset) / 1e6, (total + pr->offset) / 1e6);
  pr->drawn = true;
  return 0;
}

}  // namespace

HubClient::Response HubClient::request(const std::string& method, const std::string& url,
                                       const std::string& what, std::FILE* sink,
                                       uint64_t resume_from, bool follow, const ApiCall* call) {
  Response r;
  CURL* c = curl_easy_init();
  if (!c) throw RuntimeError("libcurl initialisation failed");
  ++requests_;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* hdrs = nullptr;
  std::string auth;
  if (config_.token && (!call || call->send_token)) {
    auth = "Authorization: Bearer " + *config_.token;
    hdrs = curl_slist_append(hdrs, auth.c_str());
  }
  hdrs = curl_slist_append(hdrs, "Accept-Encoding: identity");
  if (call) {
    for (const auto& h : call->headers) hdrs = curl_slist_append(hdrs, h.c_str());
    if (method != "GET") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, call->body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call->body.size()));
    }
  }
  if (method != "GET" && method != "HEAD")
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "lm-eval/0.1 (huggingface_hub-compatible)");
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, config_.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, config_.low_speed_timeout_s);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
  // Proxies: libcurl reads http_proxy / https_proxy / no_proxy from the environment by itself.
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  Progress pr;
  if (sink) {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, nullptr);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);  // error pages must not land in the blob
    if (resume_from > 0)
      curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(resume_from));
    pr.enabled = config_.progress;
    pr.label = what;
    pr.offset = resume_from;
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &pr);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_string);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  }
  r.curl = curl_easy_perform(c);
  if (pr.drawn) std::fprintf(stderr, "\n");
  if (r.curl != CURLE_OK) r.curl_error = errbuf[0] ? errbuf : curl_easy_strerror(r.curl);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(c);
  return r;
}

namespace {

bool retryable(long status) { return status == 429 || status >= 500; }

// No name resolution means no network here: retrying only delays the fallback to the cache.
bool hopeless(CURLcode c) {
  return c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY;
}

[[noreturn]] void throw_http(const std::string& what, const RepoRef& repo, long status,
                             const std::string& error_code, bool have_token) {
  std::string who = type_word(repo.type) + " '" + repo.id + "'";
  if (status == 401 || status == 403) {
    throw UserError(who + " needs authentication (gated or private repo, HTTP " +
                        std::to_string(status) + ") while fetching " + what,
                    {},
                    have_token ? "a token with access to it (the one given was refused)"
                               : "a token in HF_TOKEN or ~/.cache/huggingface/token");
  }
  if (status == 404) {
    if (error_code == "RevisionNotFound")
      throw UserError(who + " has no revision '" + repo.revision + "'");
    if (error_code == "EntryNotFound")
      throw UserError(who + " has no file " + what + " at revision '" + repo.revision + "'");
    throw UserError(who + " was not found on the Hub (HTTP 404 for " + what + ")", {},
                    "an existing repo id, and a token if it is private");
  }
  throw RuntimeError("Hub request for " + what + " of " + who + " failed with HTTP " +
                     std::to_string(status));
}

void sleep_backoff(const HubConfig& cfg, int attempt, const std::string& retry_after) {
  double s = cfg.backoff_seconds * std::pow(2.0, attempt);
  if (!retry_after.empty()) {
    try {
      s = std::max(s, std::min(60.0, std::stod(retry_after)));
    } catch (...) {
    }
  }
  s = std::min(s, 16.0);
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

}  // namespace

std::optional<std::string> HubClient::cached_commit(const RepoRef& repo) const {
  if (is_commit_hash(repo.revision)) {
    if (fs::is_directory(snapshot_dir(repo, repo.revision))) return repo.revision;
    return std::nullopt;
  }
  if (!safe_repo_path(repo.revision)) return std::nullopt;
  std::string c = trim(read_small_file(repo_cache_dir(repo) / "refs" / repo.revision));
  if (is_commit_hash(c)) return c;
  return std::nullopt;
}

void HubClient::write_ref(const RepoRef& repo, const std::string& commit) const {
  if (is_commit_hash(repo.revision) || !safe_repo_path(repo.revision)) return;
  fs::path ref = repo_cache_dir(repo) / "refs" / repo.revision;
  if (trim(read_small_file(ref)) == commit) return;
  write_file_atomic(ref, commit);  // no newline, as huggingface_hub writes it
}

HubClient::RepoInfo HubClient::cached_repo_info(const RepoRef& repo) const {
  RepoInfo info;
  info.from_cache = true;
  auto commit = cached_commit(repo);
  if (!commit) {
    throw DataUnavailable(
        "offline: " + type_word(repo.type) + " '" + repo.id + "' at revision '" + repo.revision +
            "' is not in the cache " + config_.cache_dir.string(),
        {}, "run `lm-eval download` where the Hub is reachable, or unset HF_HUB_OFFLINE");
  }
  info.commit = *commit;
  fs::path snap = snapshot_dir(repo, *commit);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(snap, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (fs::is_regular_file(it->path()))  // follows the blob symlinks
      info.files.push_back(it->path().lexically_relative(snap).generic_string());
  }
  std::sort(info.files.begin(), info.files.end());
  return info;
}

HubClient::ApiAnswer HubClient::call_api(const ApiCall& call) {
  const std::string url = call.url.rfind("http", 0) == 0 ? call.url : config_.endpoint + call.url;
  Response r;
  for (int attempt = 0;; ++attempt) {
    r = request(call.method, url, call.url, nullptr, 0, true, &call);
    bool again = (r.transport_failed() && !hopeless(r.curl)) || retryable(r.status);
    if (!again || attempt >= config_.max_retries) break;
    sleep_backoff(config_, attempt, r.header("retry-after"));
  }
  if (r.transport_failed())
    throw RuntimeError(scrub("cannot reach the Hub at " + config_.endpoint + " for " + call.method +
                             " " + call.url + " (" + r.curl_error + ")"));
  return {r.status, scrub(r.body), r.header("x-error-code")};
}

HubClient::RepoInfo HubClient::repo_info(const RepoRef& repo) {
  if (config_.offline) return cached_repo_info(repo);
  std::string what = "repo info";
  Response r;
  for (int attempt = 0;; ++attempt) {
    r = request("GET", api_url(repo), what);
    bool again = (r.transport_failed() && !hopeless(r.curl)) || retryable(r.status);
    if (!again || attempt >= config_.max_retries) break;
    sleep_backoff(config_, attempt, r.header("retry-after"));
  }
  if (r.transport_failed()) {
    // As huggingface_hub does: an unreachable Hub falls back to what the cache holds.
    spdlog::warn("Hub unreachable ({}); using the cache for {} '{}'", scrub(r.curl_error),
                 type_word(repo.type), repo.id);
    try {
      return cached_repo_info(repo);
    } catch (const UserError&) {
      throw RuntimeError(scrub("cannot reach the Hub at " + config_.endpoint + " (" + r.curl_error +
                               ") and " + type_word(repo.type) + " '" + repo.id +
                               "' is not in the cache"));
    }
  }
  if (r.status != 200)
    throw_http(what, repo, r.status, r.header("x-error-code"), config_.token.has_value());
  RepoInfo info;
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("sha") || !j["sha"].is_string())
    throw RuntimeError("unexpected answer from " + api_url(repo) + " (no commit sha)");
  info.commit = j["sha"].get<std::string>();
  if (!is_commit_hash(info.commit)) throw RuntimeError("Hub returned an invalid commit id");
  if (j.contains("siblings") && j["siblings"].is_array())
    for (const auto& s : j["siblings"])
      if (s.is_object() && s.contains("rfilename") && s["rfilename"].is_string())
        info.files.push_back(s["rfilename"].get<std::string>());
  write_ref(repo, info.commit);
  return info;
}

fs::path HubClient::download(const RepoRef& repo, const std::string& commit,
                             const std::string& filename) {
  auto p = try_download(repo, commit, filename);
  if (!p) {
    RepoRef at = repo;
    at.revision = commit;
    throw_http(filename, at, 404, "EntryNotFound", config_.token.has_value());
  }
  return *p;
}

std::optional<fs::path> HubClient::try_download(const RepoRef& repo, const std::string& commit,
                                                const std::string& filename) {
  if (!safe_repo_path(filename)) throw UserError("unsafe repo file name '" + filename + "'");
  if (!is_commit_hash(commit)) throw UserError("not a commit id: '" + commit + "'");
  fs::path target = snapshot_dir(repo, commit) / filename;
  if (fs::exists(target)) return target;  // exists() follows the symlink to the blob
  if (config_.offline) {
    throw UserError(
        "offline: " + type_word(repo.type) + " '" + repo.id + "' at revision " + commit +
            " is missing from the cache " + config_.cache_dir.string() + ": " + filename,
        {}, "run `lm-eval download` where the Hub is reachable, or unset HF_HUB_OFFLINE");
  }
  const std::string url = resolve_url(repo, commit, filename);
  // HEAD without following redirects: the Hub puts X-Linked-Etag/-Size on the 302 for LFS files.
  Response head;
  for (int attempt = 0;; ++attempt) {
    head = request("HEAD", url, filename, nullptr, 0, false);
    bool again = (head.transport_failed() && !hopeless(head.curl)) || retryable(head.status);
    if (!again || attempt >= config_.max_retries) break;
    sleep_backoff(config_, attempt, head.header("retry-after"));
  }
  // Redirects within the Hub (renamed repos) are followed, as huggingface_hub does; those to
  // another host (the CDN) are not: that response carries the X-Linked-* headers already.
  for (int hops = 0;
       !head.transport_failed() && head.status >= 301 && head.status <= 308 && hops < 5; ++hops) {
    std::string loc = head.header("location");
    if (!loc.empty() && loc.front() == '/') loc = config_.endpoint + loc;
    if (loc.rfind(config_.endpoint + "/", 0) != 0) break;
    head = request("HEAD", loc, filename, nullptr, 0, false);
  }
  if (head.transport_failed())
    throw RuntimeError(scrub("cannot reach the Hub for " + filename + ": " + head.curl_error));
  if (head.status == 404) return std::nullopt;
  if (head.status >= 400) {
    RepoRef at = repo;
    at.revision = commit;
    throw_http(filename, at, head.status, head.header("x-error-code"), config_.token.has_value());
  }
  std::string etag = normalize_etag(
      !head.header("x-linked-etag").empty() ? head.header("x-linked-etag") : head.header("etag"));
  if (!safe_blob_name(etag))
    throw RuntimeError("Hub answered without a usable ETag for " + filename);
  int64_t size = -1;
  std::string size_s = !head.header("x-linked-size").empty() ? head.header("x-linked-size")
                                                             : head.header("content-length");
  if (!size_s.empty() && (head.status == 200 || !head.header("x-linked-size").empty())) {
    try {
      size = std::stoll(size_s);
    } catch (...) {
    }
  }

  fs::path repo_dir = repo_cache_dir(repo);
  fs::path blob = repo_dir / "blobs" / etag;
  fs::create_directories(blob.parent_path());
  {
    // Two processes fetching the same blob: the second waits, then finds it complete.
    FileLock lock(config_.cache_dir / ".locks" / repo_folder_name(repo) / (etag + ".lock"));
    if (!fs::exists(blob)) {
      fs::path part = blob;
      part += ".incomplete";
      for (int attempt = 0;; ++attempt) {
        uint64_t have = fs::exists(part) ? fs::file_size(part) : 0;
        if (size >= 0 && have > static_cast<uint64_t>(size)) {
          fs::remove(part);
          have = 0;
        }
        std::FILE* f = std::fopen(part.c_str(), have ? "ab" : "wb");
        if (!f) throw RuntimeError("cannot write " + part.string() + ": " + std::strerror(errno));
        Response g = request("GET", url, filename, f, have, true);
        // Flushed to disk before the rename below makes the blob visible as complete.
        bool written = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
        int write_errno = errno;
        if (std::fclose(f) != 0 && written) {
          written = false;
          write_errno = errno;
        }
        if (!written && write_errno != EINVAL)
          throw RuntimeError("cannot write " + part.string() + ": " + std::strerror(write_errno));
        if (g.curl == CURLE_HTTP_RETURNED_ERROR) g.curl = CURLE_OK;  // judged by status below
        if (g.curl == CURLE_RANGE_ERROR) {
          // The server ignored the Range header: start again from the first byte.
          fs::remove(part);
        } else if (!g.transport_failed() && g.status != 200 && g.status != 206 && g.status != 416 &&
                   fs::exists(part)) {
          fs::resize_file(part, have);  // never keep an error body as data
        }
        bool ok = !g.transport_failed() && (g.status == 200 || g.status == 206 || g.status == 416);
        if (ok) {
          uint64_t got = fs::file_size(part);
          if (size < 0 || got == static_cast<uint64_t>(size)) break;
          ok = false;
          if (got > static_cast<uint64_t>(size)) fs::remove(part);
        }
        if (!g.transport_failed() && g.status >= 400 && !retryable(g.status)) {
          fs::remove(part);
          RepoRef at = repo;
          at.revision = commit;
          throw_http(filename, at, g.status, g.header("x-error-code"), config_.token.has_value());
        }
        if (attempt >= config_.max_retries) {
          throw RuntimeError(scrub("download of " + filename + " from " + type_word(repo.type) +
                                   " '" + repo.id + "' failed after " +
                                   std::to_string(attempt + 1) + " attempts" +
                                   (g.transport_failed() ? ": " + g.curl_error : "")));
        }
        spdlog::info(
            "retrying {} (attempt {}): {}", filename, attempt + 2,
            g.transport_failed() ? scrub(g.curl_error) : "HTTP " + std::to_string(g.status));
        sleep_backoff(config_, attempt, g.header("retry-after"));
      }
      fs::rename(part, blob);
    }
  }

  // snapshots/<commit>/<path> -> ../../blobs/<etag> (relative, as huggingface_hub links it).
  fs::create_directories(target.parent_path());
  fs::path rel = blob.lexically_relative(target.parent_path());
  fs::path tmp = target;
  // Unique per process and thread: two threads of one process may link the same file.
  static std::atomic<uint64_t> link_counter{0};
  tmp += ".lnk" + std::to_string(::getpid()) + "_" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "_" +
         std::to_string(link_counter++);
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_symlink(rel, tmp, ec);
  if (ec) {
    fs::copy_file(blob, tmp, fs::copy_options::overwrite_existing);
  }
  fs::rename(tmp, target);
  return target;
}

std::vector<std::string> select_model_files(const std::vector<std::string>& files,
                                            const std::string& subfolder) {
  static const std::vector<std::string> wanted = {"config.json",
                                                  "generation_config.json",
                                                  "tokenizer.json",
                                                  "tokenizer_config.json",
                                                  "special_tokens_map.json",
                                                  "tokenizer.model",
                                                  "vocab.json",
                                                  "merges.txt",
                                                  "vocab.txt",
                                                  "added_tokens.json",
                                                  "spiece.model",
                                                  "sentencepiece.bpe.model",
                                                  "chat_template.jinja",
                                                  "chat_template.json",
                                                  "preprocessor_config.json"};
  const std::string prefix = subfolder.empty() ? "" : subfolder + "/";
  // The names directly inside the subfolder (the top level without one): deeper folders hold
  // other formats.
  std::vector<std::string> names;
  for (const auto& f : files)
    if (f.rfind(prefix, 0) == 0 && f.find('/', prefix.size()) == std::string::npos)
      names.push_back(f.substr(prefix.size()));
  std::vector<std::string> out;
  bool has_safetensors = false;
  for (const auto& f : names)
    if (f.size() > 12 && f.ends_with(".safetensors")) has_safetensors = true;
  for (const auto& f : names) {
    bool take = std::find(wanted.begin(), wanted.end(), f) != wanted.end();
    // The repo's own code (configuration_*.py, modeling_*.py), which trust_remote_code=True runs
    // through transformers (docs/models.md).
    take |= f.ends_with(".py");
    if (has_safetensors) {
      take |= f.ends_with(".safetensors") || f == "model.safetensors.index.json";
    } else {
      take |= (f.rfind("pytorch_model", 0) == 0 &&
               (f.ends_with(".bin") || f.ends_with(".bin.index.json")));
    }
    if (take) out.push_back(prefix + f);
  }
  return out;
}

namespace {

fs::path join_subfolder(const fs::path& dir, const std::string& subfolder) {
  return subfolder.empty() ? dir : dir / subfolder;
}

bool is_repo_id(const std::string& s) {
  return !s.empty() && s.front() != '/' && s.front() != '.' &&
         std::count(s.begin(), s.end(), '/') <= 1;
}

// Downloads `files` of the snapshot (offline: checks the cache has them).
void fetch_files(HubClient& client, const RepoRef& repo, const std::string& commit,
                 const std::vector<std::string>& files) {
  std::vector<std::string> missing;
  for (const auto& f : files) {
    if (client.config().offline) {
      if (!fs::exists(client.snapshot_dir(repo, commit) / f)) missing.push_back(f);
      continue;
    }
    client.download(repo, commit, f);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw UserError("offline: model '" + repo.id + "' at revision '" + repo.revision + "' (" +
                        commit + ") is missing from the cache: " + list,
                    {}, "run `lm-eval download` where the Hub is reachable");
  }
}

}  // namespace

fs::path resolve_model_dir(HubClient& client, const std::string& repo_or_path,
                           const std::string& revision, const std::string& subfolder) {
  if (fs::is_directory(repo_or_path)) return join_subfolder(repo_or_path, subfolder);
  if (!is_repo_id(repo_or_path))
    throw UserError("model folder '" + repo_or_path + "' does not exist", {},
                    "a local folder or a Hub repo id such as EleutherAI/pythia-160m");
  if (!subfolder.empty() && !safe_repo_path(subfolder))
    throw UserError("subfolder '" + subfolder + "' is not a folder inside the repo",
                    {"", 0, 0, "--model_args subfolder"}, "a relative path without '..'");
  RepoRef repo{RepoType::kModel, repo_or_path, revision.empty() ? "main" : revision};
  auto info = client.repo_info(repo);
  auto files = select_model_files(info.files, subfolder);
  const std::string prefix = subfolder.empty() ? "" : subfolder + "/";
  if (std::find(files.begin(), files.end(), prefix + "config.json") == files.end())
    throw UserError("model '" + repo.id + "' has no " + prefix + "config.json at revision '" +
                    repo.revision + "'");
  fetch_files(client, repo, info.commit, files);
  // Offline listings come from the snapshot itself, so a partial snapshot lists only what it has:
  // a sharded checkpoint must still have every shard its index names.
  fs::path snap = client.snapshot_dir(repo, info.commit);
  fs::path dir = join_subfolder(snap, subfolder);
  for (const char* index : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (!fs::exists(dir / index)) continue;
    auto j = nlohmann::json::parse(read_small_file(dir / index), nullptr, false);
    if (j.is_discarded() || !j.contains("weight_map") || !j["weight_map"].is_object()) continue;
    std::vector<std::string> shards;
    for (auto& [k, v] : j["weight_map"].items())
      if (v.is_string() &&
          std::find(shards.begin(), shards.end(), v.get<std::string>()) == shards.end())
        shards.push_back(v.get<std::string>());
    std::string list;
    for (const auto& s : shards) {
      if (fs::exists(dir / s)) continue;
      if (!client.config().offline && safe_repo_path(s)) {
        client.download(repo, info.commit, prefix + s);
        continue;
      }
      list += (list.empty() ? "" : ", ") + s;
    }
    if (!list.empty())
      throw UserError("offline: model '" + repo.id + "' (" + info.commit +
                      ") is missing weight shards from the cache: " + list);
  }
  return dir;
}

fs::path resolve_model_dir(const std::string& repo_or_path, const std::string& revision,
                           const std::string& subfolder) {
  if (fs::is_directory(repo_or_path)) return join_subfolder(repo_or_path, subfolder);
  HubClient client(HubConfig::from_env());
  return resolve_model_dir(client, repo_or_path, revision, subfolder);
}

fs::path resolve_adapter_dir(HubClient& client, const std::string& repo_or_path,
                             const std::string& revision) {
  if (fs::is_directory(repo_or_path)) return repo_or_path;
  if (!is_repo_id(repo_or_path))
    throw UserError("adapter folder '" + repo_or_path + "' does not exist",
                    {"", 0, 0, "--model_args peft"},
                    "a PEFT adapter folder or a Hub repo id such as org/name-lora");
  RepoRef repo{RepoType::kModel, repo_or_path, revision.empty() ? "main" : revision};
  auto info = client.repo_info(repo);
  auto listed = [&](const std::string& f) {
    return std::find(info.files.begin(), info.files.end(), f) != info.files.end();
  };
  if (!listed("adapter_config.json"))
    throw UserError(
        "'" + repo.id + "' has no adapter_config.json at revision '" + repo.revision + "'",
        {"", 0, 0, "--model_args peft"}, "a PEFT adapter repo");
  std::vector<std::string> files = {"adapter_config.json"};
  // peft reads adapter_model.safetensors when there is one, else adapter_model.bin.
  if (listed("adapter_model.safetensors"))
    files.emplace_back("adapter_model.safetensors");
  else if (listed("adapter_model.bin"))
    files.emplace_back("adapter_model.bin");
  fetch_files(client, repo, info.commit, files);
  return client.snapshot_dir(repo, info.commit);
}

fs::path resolve_adapter_dir(const std::string& repo_or_path, const std::string& revision) {
  if (fs::is_directory(repo_or_path)) return repo_or_path;
  HubClient client(HubConfig::from_env());
  return resolve_adapter_dir(client, repo_or_path, revision);
}

}  // namespace lmeval::hub

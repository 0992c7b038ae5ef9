// Hub writes over HubClient::call_api, in the requests huggingface_hub's HfApi sends.
#include "lmeval/data/hub_upload.hpp"

#include <nlohmann/json.hpp>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"

// The calls name only the ApiCall members they set (designated initializers); GCC 12 would warn
// about every member left to its default.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace lmeval::hub {

namespace {

using nlohmann::json;

std::string kind_path(const RepoRef& repo) {
  return repo.type == RepoType::kDataset ? "datasets/" : "models/";
}

std::string kind_word(const RepoRef& repo) {
  return repo.type == RepoType::kDataset ? "dataset" : "model";
}

// What a refused call means for the person running lm-eval; the server's body (scrubbed, cut)
// follows for anything else.
[[noreturn]] void refuse(const HubClient::ApiAnswer& a, const std::string& what,
                         const RepoRef& repo) {
  std::string msg = "Hub refused to " + what + " " + kind_word(repo) + " '" + repo.id + "': HTTP " +
                    std::to_string(a.status);
  if (a.status == 401)
    msg += " (the token in HF_TOKEN is missing, invalid or expired)";
  else if (a.status == 403)
    msg += " (the token has no write access to '" + repo.id.substr(0, repo.id.find('/')) + "')";
  else if (a.status == 404)
    msg += " (no such repo or organization, or the token cannot see it)";
  if (!a.error_code.empty()) msg += " [" + a.error_code + "]";
  std::string body = a.body.substr(0, 300);
  if (!body.empty()) msg += ": " + body;
  throw RuntimeError(msg);
}

void expect_ok(const HubClient::ApiAnswer& a, const std::string& what, const RepoRef& repo) {
  if (a.status < 200 || a.status >= 300) refuse(a, what, repo);
}

json parse_answer(const HubClient::ApiAnswer& a, const std::string& what) {
  json j = json::parse(a.body, nullptr, false);
  if (j.is_discarded()) throw RuntimeError("Hub answered " + what + " with something not JSON");
  return j;
}

const char* kLfsJson = "application/vnd.git-lfs+json";

// The LFS batch API's basic transfer for the files preupload sent there: a PUT of each file the
// Hub does not hold yet, then its verify call.
void upload_lfs(HubClient& client, const RepoRef& repo, const std::vector<const CommitFile*>& files,
                const std::vector<std::string>& oids) {
  json objects = json::array();
  for (size_t i = 0; i < files.size(); ++i)
    objects.push_back({{"oid", oids[i]}, {"size", files[i]->content.size()}});
  json payload = {{"operation", "upload"},
                  {"transfers", {"basic", "multipart"}},
                  {"objects", objects},
                  {"hash_algo", "sha256"},
                  {"ref", {{"name", repo.revision}}}};
  std::string prefix = repo.type == RepoType::kDataset ? "/datasets/" : "/";
  auto a = client.call_api(
      {.method = "POST",
       .url = prefix + repo.id + ".git/info/lfs/objects/batch",
       .body = payload.dump(),
       .headers = {std::string("Accept: ") + kLfsJson, std::string("Content-Type: ") + kLfsJson}});
  expect_ok(a, "start the LFS upload to", repo);
  json j = parse_answer(a, "the LFS batch request");
  for (const auto& o : j.value("objects", json::array())) {
    std::string oid = o.value("oid", "");
    const CommitFile* f = nullptr;
    for (size_t i = 0; i < oids.size(); ++i)
      if (oids[i] == oid) f = files[i];
    if (!f) continue;
    if (o.contains("error"))
      throw RuntimeError("Hub refused the LFS upload of " + f->path_in_repo + ": " +
                         o["error"].dump());
    if (!o.contains("actions")) continue;  // the Hub holds this content already
    const json& up = o["actions"]["upload"];
    std::vector<std::string> headers;
    bool multipart = false;
    const json header = up.value("header", json::object());
    for (const auto& [k, v] : header.items()) {
      if (k == "chunk_size") multipart = true;
      if (v.is_string()) headers.push_back(k + ": " + v.get<std::string>());
    }
    if (multipart)
      throw RuntimeError("Hub asked for a multipart LFS upload of " + f->path_in_repo +
                         " (a file this large is not supported by lm-eval's push)");
    auto put = client.call_api({.method = "PUT",
                                .url = up.value("href", ""),
                                .body = f->content,
                                .headers = headers,
                                .send_token = false});
    if (put.status < 200 || put.status >= 300)
      refuse(put, "store " + f->path_in_repo + " in", repo);
    if (o["actions"].contains("verify")) {
      const json& ver = o["actions"]["verify"];
      auto v = client.call_api({.method = "POST",
                                .url = ver.value("href", ""),
                                .body = json{{"oid", oid}, {"size", f->content.size()}}.dump(),
                                .headers = {std::string("Accept: ") + kLfsJson,
                                            std::string("Content-Type: ") + kLfsJson}});
      expect_ok(v, "verify " + f->path_in_repo + " in", repo);
    }
  }
}

}  // namespace

std::string base64_encode(const std::string& bytes) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += abc[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? abc[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string whoami(HubClient& client) {
  auto a = client.call_api({.url = "/api/whoami-v2"});
  if (a.status == 401)
    throw RuntimeError("Hub refused the token in HF_TOKEN (HTTP 401 from /api/whoami-v2)");
  if (a.status != 200)
    throw RuntimeError("Hub answered /api/whoami-v2 with HTTP " + std::to_string(a.status));
  json j = parse_answer(a, "/api/whoami-v2");
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    throw RuntimeError("Hub answered /api/whoami-v2 without a user name");
  return j["name"].get<std::string>();
}

void create_repo(HubClient& client, const RepoRef& repo, bool is_private) {
  size_t slash = repo.id.find('/');
  json payload = {
      {"name", slash == std::string::npos ? repo.id : repo.id.substr(slash + 1)},
      {"organization", slash == std::string::npos ? json(nullptr) : json(repo.id.substr(0, slash))},
      {"visibility", is_private ? "private" : "public"},
      {"type", kind_word(repo)}};
  auto a = client.call_api({.method = "POST",
                            .url = "/api/repos/create",
                            .body = payload.dump(),
                            .headers = {"Content-Type: application/json"}});
  if (a.status == 409) return;  // exist_ok
  expect_ok(a, "create", repo);
}

void set_gated(HubClient& client, const RepoRef& repo) {
  auto a = client.call_api({.method = "PUT",
                            .url = "/api/" + kind_path(repo) + repo.id + "/settings",
                            .body = R"({"gated": "auto"})",
                            .headers = {"Content-Type: application/json"}});
  expect_ok(a, "gate", repo);
}

std::vector<std::string> list_repo_files(HubClient& client, const RepoRef& repo) {
  auto a = client.call_api({.url = "/api/" + kind_path(repo) + repo.id + "/revision/" +
                                   url_quote(repo.revision, false)});
  expect_ok(a, "list the files of", repo);
  json j = parse_answer(a, "the file listing");
  std::vector<std::string> files;
  for (const auto& s : j.value("siblings", json::array()))
    if (s.is_object() && s.contains("rfilename") && s["rfilename"].is_string())
      files.push_back(s["rfilename"].get<std::string>());
  return files;
}

std::string read_repo_file(HubClient& client, const RepoRef& repo, const std::string& path) {
  std::string prefix = repo.type == RepoType::kDataset ? "/datasets/" : "/";
  auto a = client.call_api({.url = prefix + repo.id + "/resolve/" +
                                   url_quote(repo.revision, false) + "/" + url_quote(path, true)});
  expect_ok(a, "read " + path + " from", repo);
  return a.body;
}

std::string create_commit(HubClient& client, const RepoRef& repo,
                          const std::vector<CommitFile>& files, const std::string& summary) {
  const std::string base = "/api/" + kind_path(repo) + repo.id;
  const std::string rev = url_quote(repo.revision, false);
  json pre = json::array();
  for (const auto& f : files)
    pre.push_back({{"path", f.path_in_repo},
                   {"sample", base64_encode(f.content.substr(0, 512))},
                   {"size", f.content.size()}});
  auto a = client.call_api({.method = "POST",
                            .url = base + "/preupload/" + rev,
                            .body = json{{"files", pre}}.dump(),
                            .headers = {"Content-Type: application/json"}});
  expect_ok(a, "prepare a commit to", repo);
  json modes = parse_answer(a, "the preupload request");
  std::vector<const CommitFile*> lfs;
  std::vector<std::string> oids;
  std::vector<bool> is_lfs(files.size(), false);
  for (const auto& m : modes.value("files", json::array()))
    for (size_t i = 0; i < files.size(); ++i)
      if (m.value("path", "") == files[i].path_in_repo && m.value("uploadMode", "") == "lfs") {
        is_lfs[i] = true;
        lfs.push_back(&files[i]);
        oids.push_back(sha256_hex(files[i].content));
      }
  if (!lfs.empty()) upload_lfs(client, repo, lfs, oids);

  std::string ndjson =
      json{{"key", "header"}, {"value", {{"summary", summary}, {"description", ""}}}}.dump() + "\n";
  for (size_t i = 0; i < files.size(); ++i) {
    const CommitFile& f = files[i];
    json line = is_lfs[i] ? json{{"key", "lfsFile"},
                                 {"value",
                                  {{"path", f.path_in_repo},
                                   {"algo", "sha256"},
                                   {"oid", sha256_hex(f.content)},
                                   {"size", f.content.size()}}}}
                          : json{{"key", "file"},
                                 {"value",
                                  {{"content", base64_encode(f.content)},
                                   {"path", f.path_in_repo},
                                   {"encoding", "base64"}}}};
    ndjson += line.dump() + "\n";
  }
  auto c = client.call_api({.method = "POST",
                            .url = base + "/commit/" + rev,
                            .body = ndjson,
                            .headers = {"Content-Type: application/x-ndjson"}});
  expect_ok(c, "commit to", repo);
  json done = json::parse(c.body, nullptr, false);
  return done.is_object() ? done.value("commitOid", "") : "";
}

}  // namespace lmeval::hub

#pragma GCC diagnostic pop

// PyPI's JSON API and file downloads over libcurl (no retries beyond curl's own: the command is
// rerun by hand).
#include "lmeval/data/pypi_release.hpp"

#include <curl/curl.h>

#include <cstdlib>
#include <mutex>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "lmeval/core/sha256.hpp"

namespace lmeval {

namespace {

size_t append(char* p, size_t size, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, size * n);
  return size * n;
}

// GET `url`: the body of a 200 answer; RuntimeError naming the URL otherwise.
std::string http_get(const std::string& url) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* c = curl_easy_init();
  if (!c) throw RuntimeError("cannot start libcurl for " + url);
  std::string body;
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "lm-eval/" LMEVAL_VERSION_STRING);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 15L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK)
    throw RuntimeError("cannot fetch " + url + ": " +
                       (errbuf[0] ? std::string(errbuf) : curl_easy_strerror(rc)));
  if (status != 200) throw RuntimeError("cannot fetch " + url + ": HTTP " + std::to_string(status));
  return body;
}

}  // namespace

std::string pypi_base_url() {
  std::string base = "https://pypi.org";
  if (const char* v = std::getenv("LMEVAL_PYPI_URL"); v && *v) base = v;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

PypiFile pypi_wheel(const std::string& name, const std::string& version) {
  const std::string url = pypi_base_url() + "/pypi/" + name + "/" + version + "/json";
  Json j;
  try {
    j = Json::parse(http_get(url));
  } catch (const Json::exception& e) {
    throw RuntimeError(url + ": not JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object() || !j.contains("urls") || !j["urls"].is_array())
    throw RuntimeError(url + ": expected an object with a `urls` list");
  for (const auto& f : j["urls"]) {
    if (!f.is_object() || f.value("packagetype", "") != "bdist_wheel") continue;
    const std::string filename = f.value("filename", "");
    const std::string suffix = "-py3-none-any.whl";
    if (filename.size() < suffix.size() ||
        filename.compare(filename.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    PypiFile out;
    out.filename = filename;
    out.url = f.value("url", "");
    if (f.contains("digests") && f["digests"].is_object())
      out.sha256 = f["digests"].value("sha256", "");
    if (f.contains("size") && f["size"].is_number_unsigned()) out.size = f["size"].get<uint64_t>();
    if (out.url.empty() || out.sha256.size() != 64)
      throw RuntimeError(url + ": the wheel " + filename +
                         " has no `url` or no 64-digit `digests.sha256`");
    return out;
  }
  throw RuntimeError(url + ": lists no pure-Python wheel (bdist_wheel, -py3-none-any.whl) of " +
                     name + " " + version);
}

std::string download_verified(const PypiFile& file) {
  std::string bytes = http_get(file.url);
  const std::string got = sha256_hex(bytes);
  if (got != file.sha256)
    throw RuntimeError(file.url + ": sha256 " + got + " (" + std::to_string(bytes.size()) +
                       " bytes) differs from the published " + file.sha256 +
                       ": the download is corrupt or was tampered with; nothing was installed");
  return bytes;
}

}  // namespace lmeval

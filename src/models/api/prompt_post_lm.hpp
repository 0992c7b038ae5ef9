// PromptPostLM: what the backends that send one prompt per request to a fixed API (gguf,
// textsynth) share: one POST per body to one URL, each answer parsed as JSON and handed to the
// backend; the base URL check; lm-eval's own request limits (requests in flight, seconds per
// request) and their rows.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"

namespace lmeval::api {

// lm-eval's own limits of such a backend (the reference sends one request at a time).
struct RequestLimits {
  int64_t num_concurrent = 1;
  double timeout_s = 300;
};

// The rows of num_concurrent and timeout.
const ModelArgInfo& request_limit_info(const std::string& key);

// Reads num_concurrent and timeout into `limits`. UserError (exit 2) naming the key.
void parse_request_limits(const Json& model_args, RequestLimits& limits);

// `url` without its trailing slashes; UserError naming `name` and --model_args base_url unless
// it is an http:// or https:// URL (libcurl would read file:// and try the rest). `example`:
// what the message offers instead.
std::string checked_base_url(std::string url, const std::string& name, const std::string& example);

// An LM whose requests go one prompt each to a fixed API through one client.
class PromptPostLM : public LM {
 protected:
  // `name` starts messages; `options` gets the limits' in-flight count and timeout.
  PromptPostLM(std::string name, const RequestLimits& limits, HttpClientOptions options);
  // Posts every body to `url`; `accept(i, answer)` reads answer i (a MalformedResponse retries
  // the request, a RuntimeError fails it); the progress bar follows the accepted answers. Throws
  // RuntimeError naming the backend, `phase`, the URL and the first failure.
  void post(const std::string& url, const std::vector<std::string>& bodies, const char* phase,
            const std::function<void(size_t, const Json&)>& accept);

 private:
  std::string name_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace lmeval::api

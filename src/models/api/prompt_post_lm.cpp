// PromptPostLM, its request limits and base URL check (prompt_post_lm.hpp).
#include "models/api/prompt_post_lm.hpp"

#include <cctype>

#include "lmeval/core/error.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace ma = model_args;

namespace {

void post_bodies(HttpClient& client, const std::string& url, const std::vector<std::string>& bodies,
                 const std::string& name, const char* phase,
                 const std::function<void(size_t, const Json&)>& accept,
                 const std::function<void(size_t)>& done) {
  size_t n = 0;
  auto judge = [&](size_t i, const HttpResponse& r) -> Verdict {
    if (auto v = judge_transport(r)) return *v;
    try {
      accept(i, parse_body(r.body));
    } catch (const MalformedResponse& e) {
      return Verdict::retry(e.what());
    } catch (const RuntimeError& e) {
      return Verdict::fail(e.what());
    }
    if (done) done(++n);
    return Verdict::done();
  };
  auto failures = client.post_all(url, bodies, judge);
  if (!failures.empty())
    throw RuntimeError(name + ": " + phase + " request " +
                       std::to_string(failures.front().index + 1) + " to " + url +
                       " failed after " + std::to_string(failures.front().attempts) +
                       " attempt(s): " + failures.front().message);
}

}  // namespace

const ModelArgInfo& request_limit_info(const std::string& key) {
  using T = ModelArgType;
  static const ModelArgInfo num_concurrent{
      "num_concurrent", T::Int, "`1`", "1 to 65536",
      "Requests in flight; lm-eval's own (the reference sends one at a time)"};
  static const ModelArgInfo timeout{"timeout", T::Number, "`300`", "seconds, more than 0",
                                    "Seconds per HTTP request; lm-eval's own"};
  if (key == "timeout") return timeout;
  return num_concurrent;
}

void parse_request_limits(const Json& model_args, RequestLimits& limits) {
  auto given = [&](const char* k) {
    return model_args.is_object() && model_args.contains(k) && !ma::is_none(model_args[k]);
  };
  if (given("num_concurrent"))
    limits.num_concurrent =
        ma::as_int_in_range(model_args["num_concurrent"], "num_concurrent", 1, 65536);
  if (given("timeout")) {
    limits.timeout_s = ma::as_double(model_args["timeout"], "timeout");
    if (!(limits.timeout_s > 0))
      throw UserError("model_args timeout must be more than 0 seconds",
                      {"", 0, 0, "--model_args timeout"}, "seconds, more than 0");
  }
}

std::string checked_base_url(std::string url, const std::string& name, const std::string& example) {
  const size_t sep = url.find("://");
  std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https")
    throw UserError(name + ": base_url is not an http:// or https:// URL",
                    {"", 0, 0, "--model_args base_url"}, example);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

PromptPostLM::PromptPostLM(std::string name, const RequestLimits& limits, HttpClientOptions options)
    : name_(std::move(name)) {
  options.max_in_flight = static_cast<size_t>(limits.num_concurrent);
  options.timeout_s = limits.timeout_s;
  client_ = std::make_unique<HttpClient>(std::move(options));
}

void PromptPostLM::post(const std::string& url, const std::vector<std::string>& bodies,
                        const char* phase, const std::function<void(size_t, const Json&)>& accept) {
  post_bodies(*client_, url, bodies, name_, phase, accept, [&](size_t n) {
    if (progress_) progress_(n, bodies.size(), -1);
  });
}

}  // namespace lmeval::api

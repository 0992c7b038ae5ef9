// AnthropicCompletionsLM (anthropic_completions_lm.hpp): AnthropicLM's model_args, requests and
// the reading of their answers.
#include "models/api/anthropic_completions_lm.hpp"

#include <cstdlib>

#include "lmeval/core/error.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/anthropic_payload.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace ma = model_args;

namespace {

constexpr const char* kName = "anthropic-completions";
constexpr int64_t kMaxTokens = 2147483647;

// The value of an environment variable, empty when unset (the SDK treats "" as unset too:
// `if self.api_key and headers.get("X-Api-Key")`).
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

const std::vector<ModelArgInfo>& anthropic_completions_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"model", T::Text, "`claude-2.0`", "", "Sent as `model` in every request"},
      {"max_tokens_to_sample", T::Int, "`256`", "1 to 2147483647",
       "Read, but requests send gen_kwargs' max_gen_toks, else 2048 (as AnthropicLM does)"},
      {"temperature", T::Number, "`0`", "a number", "Sent when gen_kwargs have no temperature"},
      {"top_k", T::Int, "", "an integer", "Sent as `top_k` in every request"},
      {"top_p", T::Number, "", "a number", "Sent as `top_p` in every request"},
      {"metadata", T::Object, "", "a JSON object, e.g. {\"user_id\": \"u1\"}",
       "Sent as `metadata` in every request"},
      {"batch_size", T::Text, "`1`", "", "Accepted; requests go one prompt each"},
      request_limit_info("num_concurrent"),
      {"timeout", T::Number, "`300`", "seconds, more than 0",
       "Seconds per HTTP request (create()'s timeout)"},
  };
  return infos;
}

AnthropicCompletionsArgs parse_anthropic_completions_args(const Json& model_args) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  AnthropicCompletionsArgs a;
  for (auto it = args.begin(); it != args.end(); ++it) {
    const std::string& k = it.key();
    const Json& v = it.value();
    if (ma::is_none(v)) continue;
    if (k == "model") {
      a.model = ma::as_string(v);
    } else if (k == "max_tokens_to_sample") {
      a.max_tokens_to_sample = ma::as_int_in_range(v, k, 1, kMaxTokens);
    } else if (k == "temperature") {
      (void)ma::as_double(v, k);
      a.temperature = v.is_number() ? v : Json(ma::as_double(v, k));
    } else if (k == "top_k") {
      a.extra[k] = ma::as_int(v, k);
    } else if (k == "top_p") {
      (void)ma::as_double(v, k);
      a.extra[k] = v.is_number() ? v : Json(ma::as_double(v, k));
    } else if (k == "metadata") {
      Json m = v.is_string() ? Json::parse(v.get<std::string>(), nullptr, false) : v;
      if (!m.is_object())
        throw UserError("model_args metadata is not a JSON object",
                        {"", 0, 0, "--model_args metadata"},
                        "a JSON object such as {\"user_id\": \"...\"} (use JSON --model_args)");
      a.extra[k] = m;
    } else if (k == "batch_size") {
      // AnthropicLM takes it and never uses it.
    } else if (k != "num_concurrent" && k != "timeout") {
      // AnthropicLM passes every other key to client.completions.create, which fails at the
      // first request (TypeError: unexpected keyword argument); lm-eval refuses it up front.
      throw UserError(
          std::string(kName) + ": model_args " + k +
              " is not taken (AnthropicLM passes it to the anthropic SDK's "
              "client.completions.create, which does not accept it)",
          {"", 0, 0, "--model_args " + k},
          "model, max_tokens_to_sample, temperature, top_k, top_p, metadata, batch_size, "
          "num_concurrent, timeout");
    }
  }
  parse_request_limits(args, a);
  // anthropic.Anthropic(): base_url from ANTHROPIC_BASE_URL, else Anthropic's API.
  const std::string base = env("ANTHROPIC_BASE_URL");
  if (!base.empty()) a.base_url = base;
  a.base_url = checked_base_url(a.base_url, std::string(kName) + " (ANTHROPIC_BASE_URL)",
                                "ANTHROPIC_BASE_URL=https://api.anthropic.com or unset");
  a.api_key = env("ANTHROPIC_API_KEY");
  if (a.api_key.empty()) a.auth_token = env("ANTHROPIC_AUTH_TOKEN");
  // The SDK fails at the first request ("Could not resolve authentication method").
  if (a.api_key.empty() && a.auth_token.empty())
    throw UserError("API key not found. Please set the ANTHROPIC_API_KEY environment variable.",
                    {"", 0, 0, "ANTHROPIC_API_KEY"},
                    "an Anthropic API key in ANTHROPIC_API_KEY (or a bearer token in "
                    "ANTHROPIC_AUTH_TOKEN)");
  return a;
}

namespace {

// The SDK's headers that matter to the API (its user-agent and x-stainless-* ones are left
// out). Retries: the SDK retries 408, 409, 429, 5xx and connection failures twice itself
// (3 attempts); a RateLimitError after that is retried by anthropic_completion's
// retry_on_specific_exceptions forever, 3 s * 1.5^n apart. lm-eval: 3 attempts, 429s up to 100,
// waits of 0.5 s doubling to at most 10 s (Retry-After honoured up to 60 s).
HttpClientOptions anthropic_completions_options(const AnthropicCompletionsArgs& a) {
  HttpClientOptions o;
  if (!a.api_key.empty())
    o.headers.push_back("x-api-key: " + a.api_key);
  else
    o.headers.push_back("Authorization: Bearer " + a.auth_token);
  o.headers.push_back(std::string("anthropic-version: ") + kAnthropicVersion);
  o.headers.emplace_back("Accept: application/json");
  o.retry.max_attempts = 3;
  o.retry.rate_limited_attempts = 100;
  o.retry.min_wait_s = 0.5;
  return o;
}

}  // namespace

AnthropicCompletionsLM::AnthropicCompletionsLM(AnthropicCompletionsArgs args)
    : PromptPostLM(kName, args, anthropic_completions_options(args)), args_(std::move(args)) {}

std::vector<LoglikelihoodResult> AnthropicCompletionsLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>&) {
  throw UserError("No support for logits.", {"", 0, 0, "--model anthropic-completions"},
                  "tasks of output_type generate_until (AnthropicLM.loglikelihood)");
}

std::vector<double> AnthropicCompletionsLM::loglikelihood_rolling(const std::vector<std::string>&) {
  throw UserError("No support for logits.", {"", 0, 0, "--model anthropic-completions"},
                  "tasks of output_type generate_until (AnthropicLM.loglikelihood_rolling)");
}

std::vector<std::string> AnthropicCompletionsLM::generate_until(
    const std::vector<GenerationRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& r : requests) {
    const Json kw = r.gen_kwargs.is_object() ? r.gen_kwargs : Json::object();
    // stop_sequences=[HUMAN_PROMPT] + until: a TypeError in the reference unless until is a list.
    const Json until = kw.value("until", Json());
    if (!until.is_array())
      throw RuntimeError(std::string(kName) + ": a generate_until request's `until` is " +
                         (until.is_null() ? std::string("missing") : "not a list") +
                         " (AnthropicLM sends [HUMAN_PROMPT] + until; the reference fails with "
                         "a TypeError)");
    // max_gen_toks defaults to AnthropicLM.max_length (2048), not max_tokens_to_sample: the
    // reference's generate_until reads request_args.get("max_gen_toks", self.max_length).
    const Json max_gen = kw.contains("max_gen_toks") ? kw["max_gen_toks"] : Json(2048);
    const Json temperature = kw.contains("temperature") ? kw["temperature"] : args_.temperature;
    bodies.push_back(anthropic_completion_payload(args_.model, r.context, max_gen, temperature,
                                                  until, args_.extra)
                         .dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  std::vector<std::string> out(requests.size());
  post(args_.base_url + "/v1/complete", bodies, "generate_until", [&](size_t i, const Json& resp) {
    out[i] = parse_anthropic_completion(resp);
    answered(i, out[i]);
  });
  return out;
}

}  // namespace lmeval::api

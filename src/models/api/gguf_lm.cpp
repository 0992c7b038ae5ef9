// GgufLM (gguf_lm.hpp): GGUFLM's bodies and its get_result.
#include "models/api/gguf_lm.hpp"

#include <spdlog/spdlog.h>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace ma = model_args;

const std::vector<ModelArgInfo>& gguf_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"base_url", T::Text, "(required)", "http(s)://HOST:PORT",
       "The server; requests go to base_url/v1/completions"},
      {"max_length", T::Int, "`2048`", "", "Accepted; no effect (as in the reference)"},
      request_limit_info("num_concurrent"),
      request_limit_info("timeout"),
      {"(any other key)", T::Text, "", "", "Ignored, as GGUFLM's **kwargs ignores it"},
  };
  return infos;
}

GgufArgs parse_gguf_args(const Json& model_args, bool notes) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto given = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };
  GgufArgs a;
  // GGUFLM: assert self.base_url, "must pass `base_url` to use GGUF LM!"
  if (given("base_url")) a.base_url = ma::as_string(args["base_url"]);
  if (a.base_url.empty())
    throw UserError("must pass `base_url` to use GGUF LM!", {"", 0, 0, "--model_args base_url"},
                    "base_url=http://HOST:PORT (the llama.cpp or llama-cpp-python server)");
  a.base_url = checked_base_url(a.base_url, "gguf", "http://HOST:PORT");
  if (given("max_length"))
    a.max_length = ma::as_int_in_range(args["max_length"], "max_length", 1, INT32_MAX);
  parse_request_limits(args, a);
  if (notes)
    for (auto it = args.begin(); it != args.end(); ++it) {
      const std::string& k = it.key();
      if (k != "base_url" && k != "max_length" && k != "num_concurrent" && k != "timeout")
        spdlog::warn("gguf: model_args {} is ignored (the reference's GGUFLM ignores it too)", k);
    }
  return a;
}

Json gguf_loglikelihood_body(const std::string& context, const std::string& continuation) {
  // gguf_completion: logprobs=10, temperature=0.0; the prompt and echo only with a non-empty
  // continuation.
  Json body = {{"prompt", context}, {"logprobs", 10}, {"temperature", 0.0}};
  if (!continuation.empty()) {
    body["prompt"] = context + continuation;
    body["max_tokens"] = 1;
    body["echo"] = true;
  }
  return body;
}

Json gguf_generate_body(const std::string& context, const Json& gen_kwargs) {
  // request_args.get("until", ["</s>"]); stop omitted when it is None. No max_tokens: the
  // server's default length applies, as in the reference.
  Json body = {{"prompt", context}, {"logprobs", 10}, {"temperature", 0.0}};
  const Json until = gen_kwargs.is_object() && gen_kwargs.contains("until") ? gen_kwargs["until"]
                                                                            : Json::array({"</s>"});
  if (!until.is_null()) body["stop"] = until;
  return body;
}

LoglikelihoodResult parse_gguf_logprobs(const Json& answer, const std::string& context) {
  if (!answer.is_object() || !answer.contains("choices") || !answer["choices"].is_array() ||
      answer["choices"].empty() || !answer["choices"][0].is_object())
    throw MalformedResponse("the answer has no choices");
  const Json& lp = answer["choices"][0].value("logprobs", Json());
  // The reference warns and appends nothing (its results then misalign): lm-eval refuses it.
  if (!lp.is_object() || !lp.contains("token_logprobs") || !lp["token_logprobs"].is_array() ||
      lp["token_logprobs"].empty())
    throw MalformedResponse(
        "Invalid logprobs data. Expected 'logprobs' to contain 'token_logprobs' list.");
  const Json& offsets = lp.value("text_offset", Json());
  const Json& tokens = lp.value("tokens", Json());
  const Json& values = lp["token_logprobs"];
  const Json& tops = lp.value("top_logprobs", Json());
  if (!offsets.is_array() || !tokens.is_array() || !tops.is_array())
    throw MalformedResponse("logprobs lacks text_offset, tokens or top_logprobs lists");
  const auto context_length = static_cast<double>(unicode::length(context));
  size_t idx = 0;
  while (true) {
    if (idx >= offsets.size())
      throw RuntimeError(
          "gguf: no token of the answer starts past the context (text_offset ends at " +
          std::to_string(offsets.size()) + " tokens; the reference fails here too)");
    if (!offsets[idx].is_number())
      throw MalformedResponse("logprobs.text_offset[" + std::to_string(idx) + "] is not a number");
    if (offsets[idx].get<double>() >= context_length) break;
    ++idx;
  }
  LoglikelihoodResult r;
  // sum(tokens_logprobs[idx:-1]).
  for (size_t i = idx; i + 1 < values.size(); ++i) {
    if (!values[i].is_number())
      throw MalformedResponse("logprobs.token_logprobs[" + std::to_string(i) + "] is not a number");
    r.loglikelihood += values[i].get<double>();
  }
  r.is_greedy = true;
  for (size_t i = idx; i < tokens.size(); ++i) {
    if (i >= tops.size() || !tops[i].is_object() || tops[i].empty())
      throw MalformedResponse("logprobs.top_logprobs[" + std::to_string(i) +
                              "] is not an object of token logprobs");
    // max(top_tokens.keys(), key=lambda x: top_tokens[x]): the first of the largest.
    std::string best;
    double best_v = 0;
    bool first = true;
    for (auto it = tops[i].begin(); it != tops[i].end(); ++it) {
      if (!it.value().is_number())
        throw MalformedResponse("logprobs.top_logprobs[" + std::to_string(i) +
                                "] has a value that is not a number");
      const double v = it.value().get<double>();
      if (first || v > best_v) {
        best = it.key();
        best_v = v;
        first = false;
      }
    }
    if (!tokens[i].is_string() || best != tokens[i].get<std::string>()) {
      r.is_greedy = false;
      break;
    }
  }
  return r;
}

namespace {

// gguf_completion: 3 tries, 5 s apart.
HttpClientOptions gguf_client_options() {
  HttpClientOptions o;
  o.retry.max_attempts = 3;
  o.retry.multiplier_s = 5;
  o.retry.min_wait_s = 5;
  o.retry.max_wait_s = 5;
  o.retry.jitter = 0;
  return o;
}

}  // namespace

GgufLM::GgufLM(GgufArgs args)
    : PromptPostLM("gguf", args, gguf_client_options()), args_(std::move(args)) {}

std::vector<LoglikelihoodResult> GgufLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& r : requests)
    bodies.push_back(gguf_loglikelihood_body(r.context, r.continuation)
                         .dump(-1, ' ', false, Json::error_handler_t::replace));
  std::vector<LoglikelihoodResult> out(requests.size());
  post(args_.base_url + "/v1/completions", bodies, "loglikelihood",
       [&](size_t i, const Json& answer) {
         out[i] = parse_gguf_logprobs(answer, requests[i].context);
         answered(i, out[i]);
       });
  return out;
}

std::vector<double> GgufLM::loglikelihood_rolling(const std::vector<std::string>&) {
  throw UserError("loglikelihood_rolling not yet supported for GGUF models",
                  {"", 0, 0, "--model gguf"},
                  "tasks of output_type loglikelihood, multiple_choice or generate_until; or "
                  "--model local-completions with the server's tokenizer");
}

std::vector<std::string> GgufLM::generate_until(const std::vector<GenerationRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& r : requests)
    bodies.push_back(gguf_generate_body(r.context, r.gen_kwargs)
                         .dump(-1, ' ', false, Json::error_handler_t::replace));
  std::vector<std::string> out(requests.size());
  post(args_.base_url + "/v1/completions", bodies, "generate_until",
       [&](size_t i, const Json& answer) {
         if (!answer.is_object() || !answer.contains("choices") || !answer["choices"].is_array() ||
             answer["choices"].empty() || !answer["choices"][0].is_object())
           throw MalformedResponse("Invalid response for greedy_until: the answer has no choices");
         const Json& text = answer["choices"][0].value("text", Json());
         // The reference appends None (and fails later): lm-eval retries, then stops with exit 1.
         if (!text.is_string())
           throw MalformedResponse("Invalid response for greedy_until: choices[0] has no text");
         out[i] = std::string(unicode::py_strip(text.get<std::string>()));
         answered(i, out[i]);
       });
  return out;
}

}  // namespace lmeval::api

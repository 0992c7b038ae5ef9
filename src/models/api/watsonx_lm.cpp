// WatsonxLM (watsonx_lm.hpp): WatsonxLLM's model_args and credentials, its requests and the
// reading of their answers.
#include "models/api/watsonx_lm.hpp"

#include <cstdlib>
#include <memory>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace ma = model_args;

namespace {

constexpr const char* kName = "watsonx_llm";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Python's truthiness of a model_args value (`if not args.get("do_sample", None)`).
bool truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get<std::string>().empty();
  return !v.empty();
}

}  // namespace

const std::vector<ModelArgInfo>& watsonx_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"model_id", T::Text, "", "a watsonx.ai model id, e.g. ibm/granite-3-8b-instruct",
       "The model (model_id or deployment_id is required)"},
      {"deployment_id", T::Text, "", "a deployment's id",
       "A deployment instead of model_id (generation only)"},
      {"do_sample", T::Bool, "`False`", "",
       "decoding_method sample; without it temperature, top_p, top_k and seed are dropped"},
      {"temperature", T::Number, "", "", "Sent in parameters (with do_sample)"},
      {"top_p", T::Number, "", "", "Sent in parameters (with do_sample)"},
      {"top_k", T::Int, "", "", "Sent in parameters (with do_sample)"},
      {"seed", T::Int, "", "", "Sent as random_seed (with do_sample)"},
      {"length_penalty", T::Object, "", "", "Sent in parameters"},
      {"repetition_penalty", T::Number, "", "", "Sent in parameters"},
      {"min_new_tokens", T::Int, "", "", "Sent in parameters"},
      {"max_new_tokens", T::Int, "`256`", "", "Sent in parameters (1 for loglikelihood)"},
      {"stop_sequences", T::Object, "", "a JSON list of strings", "Sent in parameters"},
      {"time_limit", T::Int, "", "", "Sent in parameters (milliseconds)"},
      {"truncate_input_tokens", T::Int, "", "", "Sent in parameters"},
      request_limit_info("num_concurrent"),
      request_limit_info("timeout"),
      {"(any other key)", T::Text, "", "", "Ignored, as WatsonxLLM ignores it"},
  };
  return infos;
}

WatsonxArgs parse_watsonx_args(const Json& model_args) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto get = [&](const char* k) {
    return args.contains(k) && !ma::is_none(args[k]) ? args[k] : Json();
  };
  WatsonxArgs a;
  if (!get("model_id").is_null()) a.model_id = ma::as_string(get("model_id"));
  if (!get("deployment_id").is_null()) a.deployment_id = ma::as_string(get("deployment_id"));
  if (a.model_id.empty() && a.deployment_id.empty())
    throw UserError("'model_id' or 'deployment_id' is required, please pass it in 'model_args'",
                    {"", 0, 0, "--model_args model_id"},
                    "model_id=<a watsonx.ai model id, e.g. ibm/granite-3-8b-instruct>");
  // create_from_arg_string's generate_params, in its order, None values left out.
  const bool sample = truthy(get("do_sample"));
  Json p = Json::object();
  p["decoding_method"] = sample ? "sample" : "greedy";
  auto put = [&](const char* name, const char* key, bool only_sampling) {
    const Json v = get(key);
    if (!v.is_null() && (sample || !only_sampling)) p[name] = v;
  };
  put("length_penalty", "length_penalty", false);
  put("temperature", "temperature", true);
  put("top_p", "top_p", true);
  put("top_k", "top_k", true);
  put("random_seed", "seed", true);
  put("repetition_penalty", "repetition_penalty", false);
  put("min_new_tokens", "min_new_tokens", false);
  p["max_new_tokens"] = get("max_new_tokens").is_null() ? Json(256) : get("max_new_tokens");
  put("stop_sequences", "stop_sequences", false);
  put("time_limit", "time_limit", false);
  put("truncate_input_tokens", "truncate_input_tokens", false);
  p["return_options"] = {{"generated_tokens", true},
                         {"input_tokens", true},
                         {"token_logprobs", true},
                         {"token_ranks", true}};
  a.generate_params = p;
  parse_request_limits(args, a);

  // get_watsonx_credentials and _verify_credentials, with their message.
  a.url = env("WATSONX_URL");
  a.username = env("WATSONX_USERNAME");
  a.password = env("WATSONX_PASSWORD");
  a.api_key = env("WATSONX_API_KEY");
  a.project_id = env("WATSONX_PROJECT_ID");
  const std::string space_id = env("WATSONX_SPACE_ID");
  const bool has_auth = (!a.username.empty() && !a.password.empty()) || !a.api_key.empty();
  if (!has_auth || a.url.empty() || (a.project_id.empty() && space_id.empty())) {
    std::string missing, field;
    auto add = [&](const std::string& what, const char* var) {
      missing += (missing.empty() ? "" : ", ") + what;
      if (field.empty()) field = var;
    };
    if (!has_auth)
      add("either ('username' and 'password') or 'apikey' (WATSONX_API_KEY)", "WATSONX_API_KEY");
    if (a.url.empty()) add("url (WATSONX_URL)", "WATSONX_URL");
    if (a.project_id.empty() && space_id.empty())
      add("either 'project_id' (WATSONX_PROJECT_ID) or 'space_id' (WATSONX_SPACE_ID)",
          "WATSONX_PROJECT_ID");
    throw UserError("Missing required credentials: " + missing +
                        ". Please set the environment variables indicated in parentheses.",
                    {"", 0, 0, field}, "the WATSONX_* variables of your watsonx.ai instance");
  }
  // The SDK's APIClient: "`url` must start with `https://`." lm-eval also takes http:// to a
  // loopback host (a local proxy or test server).
  const bool loopback =
      a.url.rfind("http://127.0.0.1", 0) == 0 || a.url.rfind("http://localhost", 0) == 0;
  if (a.url.rfind("https://", 0) != 0 && !loopback)
    throw UserError("`url` must start with `https://`.", {"", 0, 0, "WATSONX_URL"},
                    "WATSONX_URL=https://<your watsonx.ai host>");
  // get_watsonx_credentials: a URL without "cloud.ibm.com" is watsonx.ai software.
  // LMEVAL_WATSONX_IAM_URL (lm-eval's own) names another IAM token URL, which also means IBM
  // Cloud (a private IAM endpoint, or a test server).
  const std::string iam_override = env("LMEVAL_WATSONX_IAM_URL");
  if (a.url.find("cloud.ibm.com") != std::string::npos || !iam_override.empty()) {
    std::string base = a.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    // HrefDefinitions.get_iam_token_url: production IAM for the SDK's production URLs.
    static const char* const kProduction[] = {
        "https://ca-tor.ml.cloud.ibm.com",         "https://private.ca-tor.ml.cloud.ibm.com",
        "https://wxai-qa.ml.cloud.ibm.com",        "https://private.wxai-qa.ml.cloud.ibm.com",
        "https://us-south.ml.cloud.ibm.com",       "https://eu-gb.ml.cloud.ibm.com",
        "https://eu-de.ml.cloud.ibm.com",          "https://jp-tok.ml.cloud.ibm.com",
        "https://au-syd.ml.cloud.ibm.com",         "https://private.us-south.ml.cloud.ibm.com",
        "https://private.eu-gb.ml.cloud.ibm.com",  "https://private.eu-de.ml.cloud.ibm.com",
        "https://private.jp-tok.ml.cloud.ibm.com", "https://private.au-syd.ml.cloud.ibm.com"};
    bool production = false;
    for (const char* u : kProduction) production |= base == u;
    a.iam_url = !iam_override.empty() ? iam_override
                : production          ? "https://iam.cloud.ibm.com/identity/token"
                                      : "https://iam.test.cloud.ibm.com/identity/token";
    if (a.api_key.empty())
      throw UserError(
          "watsonx_llm: IBM Cloud needs WATSONX_API_KEY (the SDK exchanges the key "
          "at IBM Cloud's IAM for a token)",
          {"", 0, 0, "WATSONX_API_KEY"}, "your IBM Cloud API key");
  } else if (a.username.empty()) {
    throw UserError(
        "watsonx_llm: watsonx.ai software needs WATSONX_USERNAME (the SDK "
        "authorizes username with API key or password)",
        {"", 0, 0, "WATSONX_USERNAME"}, "your watsonx.ai software user name");
  }
  a.url = checked_base_url(a.url, kName, "WATSONX_URL=https://<your watsonx.ai host>");
  return a;
}

LoglikelihoodResult watsonx_log_likelihood(const Json& input_tokens,
                                           const std::vector<std::string>& context_tokens) {
  if (!input_tokens.is_array()) throw MalformedResponse("the answer has no input_tokens");
  std::vector<std::string> response;
  for (const auto& t : input_tokens) {
    if (!t.is_object() || !t.contains("text") || !t["text"].is_string())
      throw MalformedResponse("an input token has no text");
    response.push_back(t["text"].get<std::string>());
  }
  // _has_stop_token: the context's tokens but its last must open the response; a last response
  // token other than the context's last means a stop token (</s>) ended the context's
  // tokenization, which the response lacks.
  size_t context_length = context_tokens.size();
  const size_t prefix = context_length == 0 ? 0 : context_length - 1;
  bool same = prefix <= response.size();
  for (size_t i = 0; same && i < prefix; ++i) same = response[i] == context_tokens[i];
  if (!same) {
    auto list = [](const std::vector<std::string>& v, size_t n) {
      Json a = Json::array();
      for (size_t i = 0; i < v.size() && i < n; ++i) a.push_back(v[i]);
      return py::json_dumps(a, {.ensure_ascii = false});
    };
    throw RuntimeError(
        "watsonx_llm: There is an unexpected difference between tokenizer and model tokens: "
        "context_tokens=" +
        list(context_tokens, context_tokens.size()) +
        " response_tokens=" + list(response, context_tokens.size()));
  }
  // context_tokens[-1] of an empty list is an IndexError in the reference; response[-1] too.
  if (response.empty() || context_tokens.empty())
    throw RuntimeError("watsonx_llm: no tokens to compare (the reference raises IndexError)");
  if (response.back() != context_tokens.back()) --context_length;
  LoglikelihoodResult r{0.0, true};
  for (size_t i = context_length; i < input_tokens.size(); ++i) {
    const Json& t = input_tokens[i];
    // token.get("logprob", 0): absent counts 0, null fails the sum.
    if (t.contains("logprob")) {
      if (!t["logprob"].is_number())
        throw RuntimeError("watsonx_llm: input token " + std::to_string(i) +
                           " has a logprob that is not a number");
      r.loglikelihood += t["logprob"].get<double>();
    }
    if (!t.contains("rank") || !t["rank"].is_number())
      throw RuntimeError("watsonx_llm: input token " + std::to_string(i) + " has no rank");
    r.is_greedy = r.is_greedy && t["rank"].get<double>() == 1;
  }
  return r;
}

namespace {

// The bearer token of every later request. IBM Cloud: IAMTokenAuth's form body (the key as it
// is, the grant type URL-encoded) with its fixed Basic authorization, answered by access_token;
// software: /icp4d-api/v1/authorize with username and api_key (else password), answered by token.
std::string fetch_token(const WatsonxArgs& a) {
  HttpClientOptions o;
  o.timeout_s = a.timeout_s;
  const bool cloud = !a.iam_url.empty();
  std::string body, url, field;
  if (cloud) {
    o.headers = {"Content-Type: application/x-www-form-urlencoded",
                 "Authorization: Basic Yng6Yng="};
    body = "apikey=" + a.api_key + "&grant_type=urn%3Aibm%3Aparams%3Aoauth%3Agrant-type%3Aapikey";
    url = a.iam_url;
    field = "access_token";
  } else {
    Json b = {{"username", a.username}};
    if (!a.api_key.empty())
      b["api_key"] = a.api_key;
    else
      b["password"] = a.password;
    body = b.dump();
    url = a.url + "/icp4d-api/v1/authorize";
    field = "token";
  }
  HttpClient client(o);
  std::string token;
  auto failures = client.post_all(url, {body}, [&](size_t, const HttpResponse& r) -> Verdict {
    if (auto v = judge_transport(r)) return *v;
    try {
      const Json ans = parse_body(r.body);
      if (!ans.is_object() || !ans.contains(field) || !ans[field].is_string())
        return Verdict::fail("the answer has no " + field);
      token = ans[field].get<std::string>();
    } catch (const MalformedResponse& e) {
      return Verdict::retry(e.what());
    }
    return Verdict::done();
  });
  if (!failures.empty())
    throw RuntimeError("watsonx_llm: getting a token at " + url + " failed after " +
                       std::to_string(failures.front().attempts) +
                       " attempt(s): " + failures.front().message);
  return token;
}

HttpClientOptions watsonx_options(const WatsonxArgs& a) {
  HttpClientOptions o;
  o.headers.push_back("Authorization: Bearer " + fetch_token(a));
  return o;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

WatsonxLM::WatsonxLM(WatsonxArgs args)
    : PromptPostLM(kName, args, watsonx_options(args)), args_(std::move(args)) {}

std::string WatsonxLM::endpoint(const std::string& what) const {
  const std::string base = args_.deployment_id.empty()
                               ? args_.url + "/ml/v1/text/"
                               : args_.url + "/ml/v1/deployments/" + args_.deployment_id + "/text/";
  return base + what + "?version=" + kWatsonxApiVersion;
}

// APIClient gets only the project: a space-only setup sends neither id (as the reference does).
Json WatsonxLM::with_project(Json body) const {
  if (args_.deployment_id.empty() && !args_.project_id.empty())
    body["project_id"] = args_.project_id;
  return body;
}

std::optional<std::string> WatsonxLM::chat_template(const std::string&) const {
  return std::string();  // the service applies the model's own template
}

// WatsonxLLM.apply_chat_template: the messages as json.dumps text (JsonChatStr), sent to the
// chat endpoint by generate_until.
std::string WatsonxLM::apply_chat_template(const std::vector<ChatMessage>& messages, bool) const {
  chat_contexts_ = true;
  Json a = Json::array();
  for (const auto& m : messages) a.push_back(Json{{"role", m.role}, {"content", m.content}});
  return py::json_dumps(a);
}

std::vector<std::string> WatsonxLM::generate_until(const std::vector<GenerationRequest>& requests) {
  // The reference's generate_until sends self.generate_params whatever the request's gen_kwargs.
  std::vector<std::string> bodies;
  for (const auto& r : requests) {
    Json body = Json::object();
    if (chat_contexts_) {
      if (args_.deployment_id.empty()) body["model_id"] = args_.model_id;
      body["messages"] = Json::parse(r.context, nullptr, false);
      if (!body["messages"].is_array())
        throw RuntimeError("watsonx_llm: a chat request's messages are not a JSON list");
      for (auto it = args_.generate_params.begin(); it != args_.generate_params.end(); ++it)
        body[it.key()] = it.value();
    } else {
      if (args_.deployment_id.empty()) body["model_id"] = args_.model_id;
      body["input"] = r.context;
      body["parameters"] = args_.generate_params;
    }
    bodies.push_back(dump(with_project(std::move(body))));
  }
  std::vector<std::string> out(requests.size());
  post(endpoint(chat_contexts_ ? "chat" : "generation"), bodies, "generate_until",
       [&](size_t i, const Json& resp) {
         if (chat_contexts_) {
           const Json c = resp.is_object() ? resp.value("choices", Json()) : Json();
           if (!c.is_array() || c.empty() || !c[0].is_object() ||
               !c[0].value("message", Json()).is_object() ||
               !c[0]["message"].value("content", Json()).is_string())
             throw MalformedResponse("the answer has no choices[0].message.content");
           out[i] = c[0]["message"]["content"].get<std::string>();
         } else {
           const Json res = resp.is_object() ? resp.value("results", Json()) : Json();
           if (!res.is_array() || res.empty() || !res[0].is_object() ||
               !res[0].value("generated_text", Json()).is_string())
             throw MalformedResponse("the answer has no results[0].generated_text");
           out[i] = res[0]["generated_text"].get<std::string>();
         }
         answered(i, out[i]);
       });
  return out;
}

std::vector<LoglikelihoodResult> WatsonxLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  if (!args_.deployment_id.empty())
    throw UserError(
        "watsonx_llm: loglikelihood with deployment_id is not supported (the SDK's "
        "tokenization of a deployment was not reproduced)",
        {"", 0, 0, "--model_args deployment_id"},
        "model_id=<the model's id> for loglikelihood tasks");
  // _check_model_logprobs_support: one generation with generate_params, once per call.
  const Json probe = with_project(Json{{"model_id", args_.model_id},
                                       {"input", "The best ice cream flavor is:"},
                                       {"parameters", args_.generate_params}});
  post(endpoint("generation"), {dump(probe)}, "loglikelihood", [&](size_t, const Json& resp) {
    const Json res = resp.is_object() ? resp.value("results", Json()) : Json();
    if (!res.is_array() || res.empty() || !res[0].is_object() ||
        !res[0].value("input_tokens", Json()).is_array())
      throw MalformedResponse("the answer has no results[0].input_tokens");
    for (const auto& t : res[0]["input_tokens"])
      if (t.is_object() && t.contains("logprob") && !t["logprob"].is_null()) return;
    throw RuntimeError("Model " + args_.model_id +
                       " is not supported: does not return logprobs for input tokens");
  });
  if (progress_) progress_(0, requests.size(), -1);

  std::vector<std::string> tokenize_bodies, generate_bodies;
  Json params = args_.generate_params;
  params["max_new_tokens"] = 1;
  for (const auto& r : requests) {
    // The SDK's tokenize body has parameters after project_id.
    Json t = with_project(Json{{"model_id", args_.model_id}, {"input", r.context}});
    t["parameters"] = {{"return_tokens", true}};
    tokenize_bodies.push_back(dump(t));
    generate_bodies.push_back(dump(with_project(Json{{"model_id", args_.model_id},
                                                     {"input", r.context + r.continuation},
                                                     {"parameters", params}})));
  }
  std::vector<std::vector<std::string>> context_tokens(requests.size());
  post(endpoint("tokenization"), tokenize_bodies, "loglikelihood", [&](size_t i, const Json& resp) {
    const Json res = resp.is_object() ? resp.value("result", Json()) : Json();
    if (!res.is_object() || !res.value("tokens", Json()).is_array())
      throw MalformedResponse("the answer has no result.tokens");
    context_tokens[i].clear();
    for (const auto& t : res["tokens"]) {
      if (!t.is_string()) throw MalformedResponse("a token is not a string");
      context_tokens[i].push_back(t.get<std::string>());
    }
  });
  std::vector<LoglikelihoodResult> out(requests.size());
  post(endpoint("generation"), generate_bodies, "loglikelihood", [&](size_t i, const Json& resp) {
    const Json res = resp.is_object() ? resp.value("results", Json()) : Json();
    if (!res.is_array() || res.empty() || !res[0].is_object())
      throw MalformedResponse("the answer has no results[0]");
    out[i] = watsonx_log_likelihood(res[0].value("input_tokens", Json()), context_tokens[i]);
    answered(i, out[i]);
  });
  return out;
}

std::vector<double> WatsonxLM::loglikelihood_rolling(const std::vector<std::string>&) {
  // WatsonxLLM.loglikelihood_rolling unpacks each request's one argument into two names.
  throw UserError(
      "watsonx_llm: loglikelihood_rolling fails in the reference (WatsonxLLM unpacks each "
      "request as (context, continuation): not enough values to unpack)",
      {"", 0, 0, "--model watsonx_llm"},
      "tasks of output_type loglikelihood, multiple_choice or generate_until");
}

}  // namespace lmeval::api

// TextSynthLM (textsynth_lm.hpp): TextSynthLM's bodies and the reading of its answers.
#include "models/api/textsynth_lm.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "lmeval/core/error.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace ma = model_args;

const std::vector<ModelArgInfo>& textsynth_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"engine", T::Text, "(required)", "a TextSynth engine, e.g. gptj_6B",
       "Requests go to base_url/v1/engines/ENGINE/..."},
      {"truncate", T::Bool, "`False`", "", "Accepted; no effect (as in the reference)"},
      {"base_url", T::Text, "`https://api.textsynth.com`", "http(s)://HOST[:PORT]",
       "The API; lm-eval's own (the reference's is fixed)"},
      request_limit_info("num_concurrent"),
      request_limit_info("timeout"),
      {"(any other key)", T::Text, "", "", "Ignored, as TextSynthLM's **kwargs ignores it"},
  };
  return infos;
}

TextSynthArgs parse_textsynth_args(const Json& model_args, bool notes) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto given = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };
  TextSynthArgs a;
  if (!given("engine"))
    throw UserError("textsynth needs engine (TextSynthLM's one required argument)",
                    {"", 0, 0, "--model_args engine"}, "engine=<a TextSynth engine, e.g. gptj_6B>");
  a.engine = ma::as_string(args["engine"]);
  if (given("truncate")) (void)ma::as_bool(args["truncate"], "truncate");
  if (given("base_url")) a.base_url = ma::as_string(args["base_url"]);
  a.base_url = checked_base_url(a.base_url, "textsynth", "https://api.textsynth.com");
  parse_request_limits(args, a);
  // os.environ["TEXTSYNTH_API_SECRET_KEY"] (a KeyError in the reference).
  const char* key = std::getenv("TEXTSYNTH_API_SECRET_KEY");
  if (!key || !*key)
    throw UserError("TEXTSYNTH_API_SECRET_KEY is not set", {"", 0, 0, "TEXTSYNTH_API_SECRET_KEY"},
                    "your TextSynth API key in TEXTSYNTH_API_SECRET_KEY");
  a.api_key = key;
  if (notes)
    for (auto it = args.begin(); it != args.end(); ++it) {
      bool known = false;
      for (const auto& i : textsynth_arg_infos()) known |= i.key == it.key();
      if (!known)
        spdlog::warn(
            "textsynth: model_args {} is ignored (the reference's TextSynthLM ignores "
            "it too)",
            it.key());
    }
  return a;
}

namespace {

// The key as a Bearer token. The reference retries every RequestException forever; lm-eval tries
// 5 times with backoff.
HttpClientOptions textsynth_client_options(const std::string& api_key) {
  HttpClientOptions o;
  o.headers.push_back("Authorization: Bearer " + api_key);
  o.retry.max_attempts = 5;
  return o;
}

}  // namespace

TextSynthLM::TextSynthLM(TextSynthArgs args)
    : PromptPostLM("textsynth", args, textsynth_client_options(args.api_key)),
      args_(std::move(args)) {}

std::string TextSynthLM::url(const std::string& what) const {
  return args_.base_url + "/v1/engines/" + args_.engine + "/" + what;
}

std::vector<LoglikelihoodResult> TextSynthLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& r : requests)
    bodies.push_back(Json{{"context", r.context}, {"continuation", r.continuation}}.dump(
        -1, ' ', false, Json::error_handler_t::replace));
  std::vector<LoglikelihoodResult> out(requests.size());
  post(url("logprob"), bodies, "loglikelihood", [&](size_t i, const Json& resp) {
    if (!resp.is_object() || !resp.contains("logprob") || !resp["logprob"].is_number())
      throw MalformedResponse("The response does not contain `logprob`");
    out[i].loglikelihood = resp["logprob"].get<double>();
    const Json& g = resp.value("is_greedy", Json());
    if (!g.is_boolean()) throw MalformedResponse("The response does not contain `is_greedy`");
    out[i].is_greedy = g.get<bool>();
    answered(i, out[i]);
  });
  return out;
}

std::vector<double> TextSynthLM::loglikelihood_rolling(const std::vector<std::string>&) {
  throw UserError(
      "`loglikelihood_rolling` is currently not supported due to lack of input tokenization "
      "support from TextSynth.",
      {"", 0, 0, "--model textsynth"},
      "tasks of output_type loglikelihood, multiple_choice or generate_until");
}

std::vector<std::string> TextSynthLM::generate_until(
    const std::vector<GenerationRequest>& requests) {
  std::vector<std::string> bodies;
  for (const auto& r : requests) {
    // request_args["until"]: the reference fails without it.
    if (!r.gen_kwargs.is_object() || !r.gen_kwargs.contains("until"))
      throw RuntimeError(
          "textsynth: a generate_until request has no `until` (TextSynthLM reads "
          "gen_kwargs[\"until\"])");
    // max_tokens is TextSynthLM.max_gen_toks (256), whatever gen_kwargs say; greedy (top_k=1).
    bodies.push_back(Json{
        {"prompt", r.context}, {"max_tokens", 256}, {"top_k", 1}, {"stop", r.gen_kwargs["until"]}}
                         .dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  std::vector<std::string> out(requests.size());
  post(url("completions"), bodies, "generate_until", [&](size_t i, const Json& resp) {
    if (!resp.is_object() || !resp.contains("text") || !resp["text"].is_string())
      throw MalformedResponse("The response does not contain generated `text`");
    out[i] = resp["text"].get<std::string>();
    answered(i, out[i]);
  });
  return out;
}

}  // namespace lmeval::api

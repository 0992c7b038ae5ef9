// SglangLM (sglang_lm.hpp): the reference's SGLangLM requests as /generate bodies.
#include "models/api/sglang_lm.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace {

// Python's x[-n:] for any integer n: the last n tokens for n > 0, all of them for n == 0, and
// for n < 0 all but the first -n (SGLangLM.generate_until slices so when max_gen_toks is not
// below max_length).
TokenIds python_tail(const TokenIds& x, int64_t n) {
  const auto size = static_cast<int64_t>(x.size());
  int64_t start = 0;
  if (n > 0)
    start = std::max<int64_t>(0, size - n);
  else if (n < 0)
    start = std::min(size, -n);
  return TokenIds(x.begin() + start, x.end());
}

}  // namespace

ServerCommand sglang_server_command(const SglangArgs& a, const std::string& python, int port) {
  return engine_server_command("SGLang server", python, "sglang.launch_server", "--model-path", a,
                               port);
}

LoglikelihoodResult parse_input_token_logprobs(const Json& answer, const TokenIds& tokens,
                                               int64_t ctxlen) {
  if (!answer.is_object() || !answer.contains("meta_info") || !answer["meta_info"].is_object())
    throw MalformedResponse("the answer has no meta_info");
  const Json& mi = answer["meta_info"];
  const Json& lps = mi.value("input_token_logprobs", Json());
  const Json& tops = mi.value("input_top_logprobs", Json());
  const std::string n_text = std::to_string(tokens.size());
  if (!lps.is_array() || lps.size() != tokens.size())
    throw MalformedResponse("meta_info.input_token_logprobs is not a list of " + n_text +
                            " entries (one per input token)");
  if (!tops.is_array() || tops.size() != tokens.size())
    throw MalformedResponse("meta_info.input_top_logprobs is not a list of " + n_text +
                            " entries (one per input token)");
  // tokens[ctxlen:] as Python slices it (a negative ctxlen counts from the end).
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t start = ctxlen < 0 ? std::max<int64_t>(0, n + ctxlen) : std::min(ctxlen, n);
  LoglikelihoodResult r;
  for (auto i = static_cast<size_t>(start); i < tokens.size(); ++i) {
    const Json& e = lps[i];
    if (!e.is_array() || e.empty())
      throw MalformedResponse("meta_info.input_token_logprobs[" + std::to_string(i) +
                              "] is not a (logprob, token_id, text) entry");
    if (e[0].is_null())
      // The reference fails here too (sum over None): the first input token has no logprob.
      throw RuntimeError(
          "sglang: a continuation leaves no context in the window of max_length "
          "(input_token_logprobs[" +
          std::to_string(i) + "] has no logprob)");
    if (!e[0].is_number())
      throw MalformedResponse("meta_info.input_token_logprobs[" + std::to_string(i) +
                              "] has no number for its logprob");
    r.loglikelihood += e[0].get<double>();
  }
  r.is_greedy = true;
  for (auto i = static_cast<size_t>(start); i < tokens.size(); ++i) {
    const Json& top = tops[i];
    if (top.is_null() || (top.is_array() && top.empty())) continue;  // `if top_logprobs:`
    if (!top.is_array())
      throw MalformedResponse("meta_info.input_top_logprobs[" + std::to_string(i) +
                              "] is not a list");
    // max(top_logprobs, key=lambda x: x[0])[1]: the first of the largest.
    const Json* best = nullptr;
    for (const auto& cand : top) {
      if (!cand.is_array() || cand.size() < 2 || !cand[0].is_number() ||
          !cand[1].is_number_integer())
        throw MalformedResponse("meta_info.input_top_logprobs[" + std::to_string(i) +
                                "] has an entry that is not (logprob, token_id, text)");
      if (!best || cand[0].get<double>() > (*best)[0].get<double>()) best = &cand;
    }
    if ((*best)[1].get<int64_t>() != tokens[i]) {
      r.is_greedy = false;
      break;
    }
  }
  return r;
}

SglangLM::SglangLM(SglangArgs args, std::unique_ptr<Tokenizer> tokenizer, const std::string& python)
    : EngineLM("sglang", std::move(tokenizer), args.secrets), args_(std::move(args)) {
  set_prefix_token_id(args_.prefix_token_id);
  start_servers(
      1, [&](int port, size_t) { return sglang_server_command(args_, python, port); },
      args_.num_concurrent, args_.api_key);
  set_max_length(args_.max_length);
}

TokenIds SglangLM::tok_encode(const std::string& text,
                              std::optional<bool> add_special_tokens) const {
  const bool special = add_special_tokens.value_or(false) || args_.add_bos_token;
  return tokenizer_->encode(text, special);
}

EngineLM::ScoringRoute SglangLM::scoring_route() const {
  ScoringRoute r;
  // (context_enc + continuation_enc)[-max_length:]: unlike VLLM, no token is kept back.
  r.max_ctx_len = max_length_;
  r.path = "/generate";
  // _model_generate(generate=False, return_logprob=True, top_logprobs_num=2,
  // logprob_start_len=0): sampling_params {temperature: 0, max_new_tokens: 1}.
  r.body = [](const TokenIds& input) {
    return Json{{"input_ids", token_list_json(input)},
                {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 1}}},
                {"return_logprob", true},
                {"top_logprobs_num", 2},
                {"logprob_start_len", 0}};
  };
  r.parse = parse_input_token_logprobs;
  return r;
}

std::vector<double> SglangLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  return rolling_loglikelihoods(texts, max_length_ - 1);  // max_length - (1 for context)
}

std::vector<std::string> SglangLM::generate_until(const std::vector<GenerationRequest>& requests) {
  const std::string eos = eos_text();
  std::vector<std::vector<std::string>> untils(requests.size());
  std::vector<Pending> work;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Json& kw = requests[i].gen_kwargs;
    if (!kw.is_object())
      throw RuntimeError("sglang: Expected `kwargs` to be of type `dict` but got " + kw.dump());
    untils[i] =
        gen_kwargs::stop_sequences(kw.value("until", Json()), eos, gen_kwargs::UntilRule::kApi);
    int64_t max_gen_toks = args_.max_gen_toks;
    if (kw.contains("max_gen_toks")) {
      if (!kw["max_gen_toks"].is_number_integer())
        throw RuntimeError("sglang: gen_kwargs max_gen_toks is not an integer: " +
                           kw["max_gen_toks"].dump());
      max_gen_toks = kw["max_gen_toks"].get<int64_t>();
    }
    // The context's last max_length - max_gen_toks tokens (Python's slice, whatever its sign).
    TokenIds toks = tok_encode(requests[i].context, args_.add_bos_token);
    const int64_t max_ctx_len = max_length_ - max_gen_toks;
    if (static_cast<int64_t>(toks.size()) > max_ctx_len) toks = python_tail(toks, max_ctx_len);
    // modify_gen_kwargs: temperature 0.0 unless given, do_sample dropped, special tokens kept;
    // then | {"max_new_tokens", "stop"}.
    Json sp = Json::object();
    for (auto it = kw.begin(); it != kw.end(); ++it)
      if (it.key() != "until" && it.key() != "max_gen_toks" && it.key() != "do_sample")
        sp[it.key()] = it.value();
    if (!sp.contains("temperature")) sp["temperature"] = 0.0;
    if (!sp.contains("skip_special_tokens")) sp["skip_special_tokens"] = false;
    if (!sp.contains("spaces_between_special_tokens")) sp["spaces_between_special_tokens"] = false;
    sp["max_new_tokens"] = max_gen_toks;
    Json stop = Json::array();
    for (const auto& s : untils[i]) stop.push_back(s);
    sp["stop"] = stop;
    // _model_generate(generate=True): Engine.generate's return_logprob=False,
    // top_logprobs_num=1, logprob_start_len=-1.
    Json body = {{"input_ids", token_list_json(toks)},
                 {"sampling_params", sp},
                 {"return_logprob", false},
                 {"top_logprobs_num", 1},
                 {"logprob_start_len", -1}};
    work.push_back({i, body.dump(-1, ' ', false, Json::error_handler_t::replace)});
  }
  // Each request's own stops (the reference applies the last request's of a batch: its default
  // batch_size of 1 makes them the same; docs/fidelity.md).
  return send_generations(work, "/generate", untils, args_.think_end_token, [](const Json& answer) {
    if (!answer.is_object()) throw MalformedResponse("the answer is not an object");
    const Json& text = answer.value("text", Json(""));
    if (!text.is_string() && !text.is_null())
      throw MalformedResponse("the answer's text is not a string");
    return text.is_string() ? text.get<std::string>() : std::string();
  });
}

}  // namespace lmeval::api

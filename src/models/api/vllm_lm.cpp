// VllmLM (vllm_lm.hpp): the reference's VLLM request semantics as /v1/completions bodies.
#include "models/api/vllm_lm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

namespace {

std::vector<std::string> visible_cuda_devices() {
  std::vector<std::string> out;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::stringstream ss(v);
    for (std::string d; std::getline(ss, d, ',');)
      if (!d.empty()) out.push_back(d);
  }
  return out;
}

}  // namespace

ServerCommand vllm_server_command(const VllmArgs& a, const std::string& python, int port,
                                  int64_t replica) {
  ServerCommand c = engine_server_command(
      a.data_parallel_size > 1 ? "vLLM server " + std::to_string(replica + 1) + " of " +
                                     std::to_string(a.data_parallel_size)
                               : "vLLM server",
      python, "vllm.entrypoints.openai.api_server", "--model", a, port);
  if (a.data_parallel_size > 1) {
    // Replica r gets the r-th slice of tensor x pipeline GPUs, as Ray's num_gpus reservation
    // gives each of the reference's replicas its own.
    const int64_t per = a.tensor_parallel_size * a.pipeline_parallel_size;
    std::vector<std::string> devices = visible_cuda_devices();
    std::string list;
    for (int64_t g = replica * per; g < (replica + 1) * per; ++g) {
      const std::string d = static_cast<size_t>(g) < devices.size()
                                ? devices[static_cast<size_t>(g)]
                                : (devices.empty() ? std::to_string(g) : "");
      if (!d.empty()) list += (list.empty() ? "" : ",") + d;
    }
    c.env.push_back("CUDA_VISIBLE_DEVICES=" + list);
  }
  return c;
}

LoglikelihoodResult parse_prompt_logprobs(const Json& answer, const TokenIds& tokens,
                                          int64_t ctxlen) {
  if (!answer.is_object() || !answer.contains("choices") || !answer["choices"].is_array() ||
      answer["choices"].empty() || !answer["choices"][0].is_object())
    throw MalformedResponse("the answer has no choices");
  const Json& pl = answer["choices"][0].value("prompt_logprobs", Json());
  if (!pl.is_array() || pl.size() != tokens.size())
    throw MalformedResponse("choices[0].prompt_logprobs is not a list of " +
                            std::to_string(tokens.size()) + " entries (one per prompt token)");
  LoglikelihoodResult r;
  r.is_greedy = true;
  // tokens[ctxlen:] as Python slices it: a negative ctxlen (a continuation longer than the
  // window) counts from the end.
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t start = ctxlen < 0 ? std::max<int64_t>(0, n + ctxlen) : std::min(ctxlen, n);
  for (auto i = static_cast<size_t>(start); i < tokens.size(); ++i) {
    const Json& d = pl[i];
    if (!d.is_object())
      // The reference fails here too (None.get): the first prompt token has no logprob.
      throw RuntimeError("vllm: a continuation leaves no context in the window of max_length " +
                         std::string("(prompt_logprobs[") + std::to_string(i) + "] is null)");
    const std::string key = std::to_string(tokens[i]);
    auto logprob_of = [&](const Json& e) -> double {
      if (e.is_number()) return e.get<double>();
      if (e.is_object() && e.contains("logprob") && e["logprob"].is_number())
        return e["logprob"].get<double>();
      throw MalformedResponse("prompt_logprobs[" + std::to_string(i) +
                              "] has an entry without a logprob");
    };
    if (!d.contains(key))
      throw MalformedResponse("prompt_logprobs[" + std::to_string(i) + "] lacks the prompt token " +
                              key);
    r.loglikelihood += logprob_of(d[key]);
    // max(logprob_dict, key=logprob_dict.get): the first of the largest, in the answer's order.
    if (r.is_greedy) {
      std::string best;
      double best_v = 0;
      for (auto it = d.begin(); it != d.end(); ++it) {
        const double v = logprob_of(it.value());
        if (best.empty() || v > best_v) {
          best = it.key();
          best_v = v;
        }
      }
      if (best != key) r.is_greedy = false;
    }
  }
  return r;
}

VllmLM::VllmLM(VllmArgs args, std::unique_ptr<Tokenizer> tokenizer, const std::string& python)
    : EngineLM("vllm", std::move(tokenizer), args.secrets), args_(std::move(args)) {
  set_prefix_token_id(args_.prefix_token_id);
  start_servers(
      static_cast<size_t>(args_.data_parallel_size),
      [&](int port, size_t r) {
        return vllm_server_command(args_, python, port, static_cast<int64_t>(r));
      },
      args_.num_concurrent, args_.api_key);
  // VLLM.max_length: as given, else the engine's max_model_len (GET /v1/models says it).
  set_max_length(args_.max_length);
}

std::string VllmLM::served_model() const {
  return args_.lora_local_path ? "finetuned" : args_.pretrained;
}

TokenIds VllmLM::tok_encode(const std::string& text, std::optional<bool> add_special_tokens) const {
  if (text.empty()) return {};
  bool special = add_special_tokens.value_or(args_.add_bos_token.value_or(true));
  // has_bos_prefix: a text that starts with the prefix token's text (a chat template's BOS).
  const std::string bos = tokenizer_->decode(std::vector<TokenId>{prefix_token_id_}, false);
  if (!bos.empty() && text.rfind(bos, 0) == 0) special = false;
  return tokenizer_->encode(text, special);
}

EngineLM::ScoringRoute VllmLM::scoring_route() const {
  ScoringRoute r;
  r.max_ctx_len = max_length_ - 1;  // vLLM requires at least one generation token
  r.warn_truncation = true;
  r.path = "/v1/completions";
  // SamplingParams(temperature=0, prompt_logprobs=1, max_tokens=1, detokenize=False).
  r.body = [model = served_model()](const TokenIds& input) {
    return Json{{"model", model},
                {"prompt", token_list_json(input)},
                {"max_tokens", 1},
                {"temperature", 0},
                {"prompt_logprobs", 1}};
  };
  r.parse = parse_prompt_logprobs;
  return r;
}

std::vector<double> VllmLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  // max_seq_len = max_length - (1 for context) - (1 for generation)
  return rolling_loglikelihoods(texts, max_length_ - 2);
}

std::vector<std::string> VllmLM::generate_until(const std::vector<GenerationRequest>& requests) {
  const std::string eos = eos_text();
  std::vector<std::vector<std::string>> untils(requests.size());
  std::vector<Pending> work;
  bool warned = false;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Json& kw = requests[i].gen_kwargs;
    // VLLM.modify_gen_kwargs: normalize_gen_kwargs, handle_stop_sequences, do_sample dropped.
    gen_kwargs::HfGenKwargs hk = gen_kwargs::normalize_for_hf(kw, args_.max_gen_toks, eos);
    untils[i] = hk.until;
    const bool greedy_asked = kw.is_object() && kw.contains("do_sample") &&
                              kw["do_sample"].is_boolean() && !kw["do_sample"].get<bool>();
    Json body = {{"model", served_model()},
                 {"skip_special_tokens", false},
                 {"spaces_between_special_tokens", false}};
    if (kw.is_object())
      for (auto it = kw.begin(); it != kw.end(); ++it) {
        const std::string& k = it.key();
        if (k == "until" || k == "do_sample" || k == "temperature") continue;
        if (std::find(std::begin(gen_kwargs::kMaxTokenAliases),
                      std::end(gen_kwargs::kMaxTokenAliases),
                      k) != std::end(gen_kwargs::kMaxTokenAliases))
          continue;
        body[k] = it.value();
      }
    // normalize_gen_kwargs sets temperature only for do_sample=False; otherwise it goes as the
    // task gave it, or not at all (the engine's default then, vLLM's 1.0: the reference's way).
    if (greedy_asked)
      body["temperature"] = 0.0;
    else if (kw.is_object() && kw.contains("temperature"))
      body["temperature"] = kw["temperature"];
    TokenIds toks = tok_encode(requests[i].context, std::nullopt);
    int64_t max_gen_toks = hk.max_gen_toks;
    // maybe_truncate(side=truncation_side, shrink_gen_toks=False).
    if (static_cast<int64_t>(toks.size()) + max_gen_toks > max_length_) {
      if (!warned)
        spdlog::warn(
            "Context length ({}) + max_gen_toks ({}) = {} exceeds model's max length ({}). "
            "Truncating context from side='{}'.",
            toks.size(), max_gen_toks, toks.size() + max_gen_toks, max_length_,
            args_.truncation_side);
      warned = true;
      toks = truncate_tokens(toks, max_length_ - max_gen_toks, args_.truncation_side);
    }
    body["prompt"] = token_list_json(toks);
    body["max_tokens"] = max_gen_toks;
    // With think_end_token only EOS stops the server; the task's stops apply after the thinking.
    Json stop = Json::array();
    for (const auto& s : hk.until)
      if (!args_.think_end_token || s == eos) stop.push_back(s);
    body["stop"] = stop;
    work.push_back({i, body.dump(-1, ' ', false, Json::error_handler_t::replace)});
  }
  return send_generations(
      work, "/v1/completions", untils, args_.think_end_token, [](const Json& answer) {
        auto texts = parse_generations(Endpoint::kCompletions, answer, 1, std::nullopt);
        return texts.front().value_or("");
      });
}

}  // namespace lmeval::api

// ApiLM: request encoding, ordering and batching as TemplateAPI does them, over HttpClient.
#include "models/api/api_lm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "lmeval/models/rolling_windows.hpp"
#include "lmeval/models/special_tokens.hpp"
#include "models/api/anthropic_payload.hpp"
#include "models/api/tokenizer_facts.hpp"

namespace lmeval::api {

namespace {

using Clock = std::chrono::steady_clock;

Json ids_json(const TokenIds& ids) {
  Json a = Json::array();
  for (TokenId t : ids) a.push_back(t);
  return a;
}

// Python's xs[-k:] for k = n (k <= 0 included: xs[-0:] is everything, xs[5:] for k = -5).
TokenIds py_tail(const TokenIds& xs, int64_t k) {
  const int64_t n = static_cast<int64_t>(xs.size());
  int64_t start = -k;
  if (k == 0) start = 0;
  if (start < 0) start += n;
  start = std::clamp<int64_t>(start, 0, n);
  return TokenIds(xs.begin() + start, xs.end());
}

std::string short_text(const std::string& s) {
  std::string t = s.size() > 60 ? s.substr(0, 60) + "..." : s;
  return py::json_dumps(Json(t));
}

// Collator.group's key for gen_kwargs: items sorted by key, each iterable value as a tuple (a
// string becomes its characters, a dict its keys), so {"until": "."} and {"until": ["."]} share
// a group as they do in the reference.
nlohmann::json gen_kwargs_group_key(const Json& kw) {
  if (!kw.is_object()) return nlohmann::json(kw.dump());
  nlohmann::json key = nlohmann::json::object();
  for (auto it = kw.begin(); it != kw.end(); ++it) {
    const Json& v = it.value();
    nlohmann::json k;
    if (v.is_string()) {
      k = nlohmann::json::array();
      unicode::for_each_codepoint(
          v.get_ref<const std::string&>(),
          [&](char32_t, std::string_view ch) { k.push_back(std::string(ch)); });
    } else if (v.is_object()) {
      k = nlohmann::json::array();
      for (auto jt = v.begin(); jt != v.end(); ++jt) k.push_back(jt.key());
    } else {
      k = nlohmann::json::parse(v.dump());
    }
    key[it.key()] = std::move(k);
  }
  return key;
}

std::string header_value(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string none_placeholder() {
  const char* v = std::getenv("LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER");
  return v ? v : "";
}

// The reference's Collator(sort_fn=(-len(ctx+cont), tuple(ctx+cont))) without grouping: longest
// first, ties by the tokens themselves; stable. `whole` gets each request's context + continuation.
std::vector<size_t> collator_order(const std::vector<TokenPair>& requests,
                                   std::vector<TokenIds>& whole) {
  std::vector<size_t> order(requests.size());
  whole.assign(requests.size(), {});
  for (size_t i = 0; i < requests.size(); ++i) {
    order[i] = i;
    whole[i] = requests[i].first;
    whole[i].insert(whole[i].end(), requests[i].second.begin(), requests[i].second.end());
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (whole[a].size() != whole[b].size()) return whole[a].size() > whole[b].size();
    return whole[a] < whole[b];
  });
  return order;
}

}  // namespace

ApiLM::ApiLM(ApiArgs args, std::unique_ptr<Tokenizer> tokenizer)
    : args_(std::move(args)), tokenizer_(std::move(tokenizer)) {
  const bool chat = args_.kind == ApiKind::kLocalChat || args_.kind == ApiKind::kOpenAIChat ||
                    args_.kind == ApiKind::kAnthropicChat;
  style_.endpoint = chat ? Endpoint::kChat : Endpoint::kCompletions;
  style_.openai_chat = args_.kind == ApiKind::kOpenAIChat;
  style_.anthropic = args_.kind == ApiKind::kAnthropicChat;
  if (chat) args_.batch_size = 1;  // chat endpoints take one conversation per request
  max_length_ = args_.max_length - 1;
  if (!tokenizer_ && args_.tokenizer_backend.empty()) args_.tokenized_requests = false;
  if (tokenizer_) {
    if (args_.custom_prefix_token_id)
      prefix_token_id_ = static_cast<TokenId>(*args_.custom_prefix_token_id);
    else if (tokenizer_->bos_token().id)
      prefix_token_id_ = tokenizer_->bos_token().id;
    else
      prefix_token_id_ = tokenizer_->eos_token().id;
  }

  HttpClientOptions o;
  o.max_in_flight = static_cast<size_t>(std::max(1, args_.num_concurrent));
  o.timeout_s = args_.timeout_s;
  o.verify_certificate = args_.verify_certificate;
  o.ca_cert_path = args_.ca_cert_path;
  o.retry = args_.retry;
  o.retry.max_attempts = std::max(1, args_.max_retries);
  if (style_.anthropic) {
    // AnthropicChat.header (its own property: a header model_arg is not used).
    o.headers.push_back("x-api-key: " + args_.api_key);
    o.headers.push_back(std::string("anthropic-version: ") + kAnthropicVersion);
  } else if (args_.header && args_.header->is_object()) {
    for (auto it = args_.header->begin(); it != args_.header->end(); ++it)
      o.headers.push_back(it.key() + ": " + header_value(it.value()));
  } else {
    o.headers.push_back("Authorization: Bearer " + args_.api_key);
  }
  client_ = std::make_unique<HttpClient>(std::move(o));
}

std::string ApiLM::scrub(std::string text) const {
  // The key, and each header value on its own: a server may echo either in an error body.
  std::vector<std::string> secrets = {args_.api_key};
  if (args_.header && args_.header->is_object())
    for (auto it = args_.header->begin(); it != args_.header->end(); ++it)
      secrets.push_back(it->is_string() ? it->get<std::string>() : it->dump());
  for (const auto& v : secrets) {
    if (v.size() < 4) continue;
    for (size_t p; (p = text.find(v)) != std::string::npos;) text.replace(p, v.size(), "***");
  }
  return mask_url_passwords(text);
}

std::optional<std::string> ApiLM::eos_string() const {
  if (args_.eos_string && !args_.eos_string->empty()) return args_.eos_string;
  if (tokenizer_ && !tokenizer_->eos_token().text.empty()) return tokenizer_->eos_token().text;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Encoding

TokenIds ApiLM::tok_encode(const std::string& text, bool add_special_tokens) const {
  if (!tokenizer_)
    throw UserError(std::string(kind_name(args_.kind)) + " needs a tokenizer to count tokens",
                    {"", 0, 0, "--model_args tokenizer"},
                    "tokenizer=<folder or Hub id> and tokenizer_backend=huggingface");
  // TemplateAPI.tok_encode: `add_special_tokens = add_special_tokens or self.add_bos_token`.
  return tokenizer_->encode(text, add_special_tokens || args_.add_bos_token);
}

TokenPair ApiLM::encode_request(const LoglikelihoodRequest& r) const {
  if (r.context.empty()) {
    TokenIds cont = tok_encode(r.continuation, false);
    if (!prefix_token_id_)
      throw UserError("the tokenizer has neither BOS nor EOS for an empty context",
                      {"", 0, 0, "--model_args custom_prefix_token_id"}, "a token id");
    if (!cont.empty() && cont[0] == *prefix_token_id_)
      return {{cont[0]}, TokenIds(cont.begin() + 1, cont.end())};
    return {{*prefix_token_id_}, cont};
  }
  // TemplateLM._encode_pair: trailing whitespace of the context moves to the continuation; the
  // continuation's ids are what the joint encoding adds after the context's.
  std::string context = r.context, continuation = r.continuation;
  const size_t kept = unicode::py_rstrip(context).size();
  if (kept < context.size()) {
    continuation = context.substr(kept) + continuation;
    context.resize(kept);
  }
  TokenIds whole = tok_encode(context + continuation);
  TokenIds ctx = tok_encode(context);
  TokenIds cont;
  if (whole.size() > ctx.size())
    cont.assign(whole.begin() + static_cast<std::ptrdiff_t>(ctx.size()), whole.end());
  return {ctx, cont};
}

// create_message: token lists as they are, or decoded text (one string when batch_size is 1).
Json ApiLM::prompt_of(const std::vector<TokenIds>& inputs) const {
  if (args_.tokenized_requests) {
    Json a = Json::array();
    for (const auto& ids : inputs) a.push_back(ids_json(ids));
    return a;
  }
  std::vector<std::string> texts;
  for (const auto& ids : inputs) texts.push_back(tokenizer_->decode(ids, false));
  if (args_.batch_size <= 1) return texts.front();
  return Json(texts);
}

void ApiLM::check_loglikelihood_supported() const {
  if (style_.anthropic)
    throw UserError("Anthropic Chat Completions API does not support the return of loglikelihood",
                    {"", 0, 0, "--model"},
                    "generate_until tasks (loglikelihood needs a server with prompt logprobs)");
  if (style_.endpoint == Endpoint::kChat)
    throw UserError(std::string("Loglikelihood is not supported for chat completions (model ") +
                        kind_name(args_.kind) + "): chat endpoints return no prompt logprobs",
                    {"", 0, 0, "--model"},
                    "local-completions for loglikelihood and multiple_choice tasks");
  if (args_.kind == ApiKind::kOpenAICompletions) {
    const std::string m = args_.model.is_string() ? args_.model.get<std::string>() : "";
    if (m != "babbage-002" && m != "davinci-002")
      throw UserError(
          "Prompt loglikelihoods are only supported by OpenAI's API for babbage-002 and "
          "davinci-002",
          {"", 0, 0, "--model_args model"}, "model=babbage-002 or model=davinci-002");
  }
}

// ---------------------------------------------------------------------------------------------
// Sending

// Bodies are kept as text only: a run's payloads as JSON trees would take several times the memory.
void ApiLM::set_body(Batch& b, const Json& payload) {
  b.body = payload.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (keep_payloads_) payloads_.push_back(payload);
}

void ApiLM::send(std::vector<Batch>& batches, const char* phase_name, size_t requests,
                 int64_t tokens, const std::function<void(const Batch&, const Json&)>& accept) {
  auto start = Clock::now();
  Phase* ph = nullptr;
  for (auto& p : phases_)
    if (p.name == phase_name) ph = &p;
  if (!ph) {
    phases_.push_back({phase_name});
    ph = &phases_.back();
  }
  std::vector<std::string> bodies;
  bodies.reserve(batches.size());
  size_t total = 0;
  for (auto& b : batches) {
    bodies.push_back(std::move(b.body));
    total += b.members.size();
  }
  size_t done = 0;
  auto judge = [&](size_t i, const HttpResponse& r) -> Verdict {
    try {
      accept(batches[i], parse_body(r.body));
    } catch (const MalformedResponse& e) {
      return Verdict::retry(e.what());
    }
    done += batches[i].members.size();
    if (progress_) progress_(done, total, -1);
    return Verdict::done();
  };
  auto on_retry = [&](size_t i, int attempt, double wait, const std::string& why) {
    ++ph->retries;
    spdlog::warn("{}: {} failed (attempt {} of {}): {}; retrying in {:.1f} s",
                 kind_name(args_.kind), batches[i].what, attempt,
                 client_->options().retry.max_attempts, scrub(why), wait);
  };
  auto failures = client_->post_all(args_.base_url, bodies, judge, on_retry);
  ph->http_requests += batches.size();
  ph->seconds += std::chrono::duration<double>(Clock::now() - start).count();
  if (!failures.empty()) {
    const auto& f = failures.front();
    throw RuntimeError(
        scrub(std::string(kind_name(args_.kind)) + ": " + batches[f.index].what + " to " +
              args_.base_url + " failed after " + std::to_string(f.attempts) +
              (f.attempts == 1 ? " attempt: " : " attempts: ") + f.message + " (" +
              std::to_string(done) + " of " + std::to_string(total) + " requests had finished)"));
  }
  ph->requests += requests;
  ph->tokens += tokens;
}

// ---------------------------------------------------------------------------------------------
// loglikelihood

std::vector<LoglikelihoodResult> ApiLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  check_loglikelihood_supported();
  std::vector<TokenPair> enc;
  enc.reserve(requests.size());
  for (const auto& r : requests) enc.push_back(encode_request(r));
  return loglikelihood_tokens(enc);
}

std::vector<LoglikelihoodResult> ApiLM::loglikelihood_tokens(
    const std::vector<TokenPair>& requests) {
  if (!tokenizer_)
    throw UserError("Tokenizer is required for loglikelihood tasks to compute context lengths",
                    {"", 0, 0, "--model_args tokenizer_backend"}, "tokenizer_backend=huggingface");
  // Collator order, no grouping; batches of batch_size.
  std::vector<TokenIds> whole;
  const std::vector<size_t> order = collator_order(requests, whole);
  std::vector<Batch> batches;
  const size_t bs = static_cast<size_t>(std::max(1, args_.batch_size));
  bool warned = false;
  for (size_t s = 0; s < order.size(); s += bs) {
    Batch b;
    std::vector<TokenIds> inputs;
    for (size_t k = s; k < std::min(order.size(), s + bs); ++k) {
      const size_t i = order[k];
      const auto& [ctx, cont] = requests[i];
      // batch_loglikelihood_requests: keep the last max_length tokens, shorten ctxlen to match.
      const int64_t n = static_cast<int64_t>(whole[i].size());
      TokenIds inp =
          n > max_length_ ? TokenIds(whole[i].end() - max_length_, whole[i].end()) : whole[i];
      if (n > max_length_ && !warned) {
        spdlog::warn(
            "Context length ({}) + continuation length ({}) > max_length ({}). Left truncating "
            "context.",
            ctx.size(), cont.size(), max_length_);
        warned = true;
      }
      const int64_t ctxlen =
          static_cast<int64_t>(ctx.size()) - std::max<int64_t>(0, n - max_length_);
      if (ctxlen <= 0)
        throw RuntimeError(
            std::string(kind_name(args_.kind)) + ": a continuation of " +
            std::to_string(cont.size()) + " tokens leaves no context within max_length " +
            std::to_string(max_length_) + " (Context length must be greater than 0)");
      b.members.push_back(i);
      b.ctxlens.push_back(ctxlen);
      b.lens.push_back(static_cast<int64_t>(inp.size()));
      inputs.push_back(std::move(inp));
    }
    set_body(b, loglikelihood_payload(args_.model, prompt_of(inputs), args_.seed));
    b.what = "loglikelihood request " + std::to_string(batches.size() + 1) + " (" +
             std::to_string(b.members.size()) + " prompt" + (b.members.size() == 1 ? "" : "s") +
             ", " + std::to_string(inputs.front().size()) + " tokens)";
    batches.push_back(std::move(b));
  }
  std::vector<LoglikelihoodResult> out(requests.size());
  int64_t tokens = 0;
  for (const auto& w : whole)
    tokens += std::min<int64_t>(static_cast<int64_t>(w.size()), max_length_);
  send(batches, "loglikelihood", requests.size(), tokens, [&](const Batch& b, const Json& answer) {
    auto res = parse_logprobs(answer, b.ctxlens, b.lens, args_.tokenized_requests);
    for (size_t k = 0; k < b.members.size(); ++k) {
      out[b.members[k]] = res[k];
      answered(b.members[k], res[k]);
    }
  });
  return out;
}

std::vector<double> ApiLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  check_loglikelihood_supported();
  if (!tokenizer_ || !prefix_token_id_)
    throw UserError("loglikelihood_rolling needs a tokenizer with a BOS or EOS token",
                    {"", 0, 0, "--model_args tokenizer"}, "tokenizer=<folder or Hub id>");
  // All windows of all texts go out together; each text's windows are ordered and batched among
  // themselves as the reference's per-text _loglikelihood_tokens call does.
  std::vector<double> out(texts.size(), 0.0);
  std::vector<std::vector<LoglikelihoodResult>> per_text(texts.size());
  std::vector<Batch> batches;
  std::vector<std::vector<TokenPair>> windows(texts.size());
  // Build each text's batches with loglikelihood_tokens' logic but without sending.
  for (size_t t = 0; t < texts.size(); ++t) {
    for (auto& w : rolling_token_windows(tok_encode(texts[t]), *prefix_token_id_, max_length_ - 1))
      windows[t].push_back({std::move(w.first), std::move(w.second)});
  }
  for (size_t t = 0; t < texts.size(); ++t) {
    const auto& reqs = windows[t];
    per_text[t].resize(reqs.size());
    std::vector<TokenIds> whole;
    const std::vector<size_t> order = collator_order(reqs, whole);
    const size_t bs = static_cast<size_t>(std::max(1, args_.batch_size));
    for (size_t s = 0; s < order.size(); s += bs) {
      Batch b;
      std::vector<TokenIds> inputs;
      for (size_t k = s; k < std::min(order.size(), s + bs); ++k) {
        const size_t i = order[k];
        const int64_t n = static_cast<int64_t>(whole[i].size());
        TokenIds inp =
            n > max_length_ ? TokenIds(whole[i].end() - max_length_, whole[i].end()) : whole[i];
        const int64_t ctxlen =
            static_cast<int64_t>(reqs[i].first.size()) - std::max<int64_t>(0, n - max_length_);
        b.members.push_back(i);
        b.ctxlens.push_back(ctxlen);
        b.lens.push_back(static_cast<int64_t>(inp.size()));
        inputs.push_back(std::move(inp));
      }
      set_body(b, loglikelihood_payload(args_.model, prompt_of(inputs), args_.seed));
      b.what = "loglikelihood_rolling request for text " + std::to_string(t + 1) + " " +
               short_text(texts[t]);
      b.tag = t;
      batches.push_back(std::move(b));
    }
  }
  int64_t tokens = 0;
  for (const auto& ws : windows)
    for (const auto& w : ws) tokens += static_cast<int64_t>(w.second.size());
  std::vector<size_t> windows_left(texts.size());
  for (size_t t = 0; t < texts.size(); ++t) {
    windows_left[t] = windows[t].size();
    // No windows (an empty text): its answer, 0, is final now.
    if (windows[t].empty()) answered_rolling(t, 0.0);
  }
  send(batches, "loglikelihood_rolling", texts.size(), tokens,
       [&](const Batch& b, const Json& answer) {
         auto res = parse_logprobs(answer, b.ctxlens, b.lens, args_.tokenized_requests);
         auto& dst = per_text[b.tag];
         for (size_t k = 0; k < b.members.size(); ++k) dst[b.members[k]] = res[k];
         // A text is answered once its last window is; summed in window order as below.
         windows_left[b.tag] -= b.members.size();
         if (windows_left[b.tag] == 0) {
           double sum = 0.0;
           for (const auto& r : dst) sum += r.loglikelihood;
           answered_rolling(b.tag, sum);
         }
       });
  for (size_t t = 0; t < texts.size(); ++t)
    for (const auto& r : per_text[t]) out[t] += r.loglikelihood;
  return out;
}

// ---------------------------------------------------------------------------------------------
// generate_until

std::vector<std::string> ApiLM::generate_until(const std::vector<GenerationRequest>& requests) {
  const bool chat = style_.endpoint == Endpoint::kChat;
  if (chat && !json_chat_contexts_ && !requests.empty())
    throw UserError(std::string(kind_name(args_.kind)) +
                        " sends conversations, so it needs --apply_chat_template",
                    {"", 0, 0, "--apply_chat_template"}, "--apply_chat_template with a chat model");
  // Collator(group_by="gen_kwargs", sort by -len(context)): groups in order of first appearance.
  std::vector<std::vector<size_t>> groups;
  std::vector<nlohmann::json> group_keys;
  for (size_t i = 0; i < requests.size(); ++i) {
    nlohmann::json key = gen_kwargs_group_key(requests[i].gen_kwargs);
    size_t g = 0;
    while (g < groups.size() && group_keys[g] != key) ++g;
    if (g == groups.size()) {
      groups.emplace_back();
      group_keys.push_back(std::move(key));
    }
    groups[g].push_back(i);
  }
  std::vector<size_t> lengths(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) lengths[i] = unicode::length(requests[i].context);

  std::vector<Batch> batches;
  const size_t bs = static_cast<size_t>(std::max(1, args_.batch_size));
  bool warned = false;
  for (auto& members : groups) {
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
    for (size_t s = 0; s < members.size(); s += bs) {
      Batch b;
      b.members.assign(members.begin() + s, members.begin() + std::min(members.size(), s + bs));
      const Json& kw = requests[b.members.front()].gen_kwargs;  // all_gen_kwargs[0] of the chunk
      Json prompt;
      if (chat) {
        prompt = Json::parse(requests[b.members.front()].context, nullptr, false);
        if (!prompt.is_array())
          throw RuntimeError(std::string(kind_name(args_.kind)) +
                             ": a request context is not a message list");
      } else if (args_.tokenized_requests) {
        const int64_t max_gen_toks = gen_kwargs::api_context_max_gen_toks(kw, args_.max_gen_toks);
        const int64_t max_context_len = max_length_ - max_gen_toks;
        prompt = Json::array();
        for (size_t i : b.members) {
          TokenIds ids =
              py_tail(tok_encode(requests[i].context, args_.add_bos_token), max_context_len);
          if (static_cast<int64_t>(ids.size()) + max_gen_toks > max_length_ && !warned) {
            spdlog::warn(
                "Some contexts exceeded (max length: ({}) - max_gen_toks: ({}). They were left "
                "truncated.",
                max_length_, max_gen_toks);
            warned = true;
          }
          prompt.push_back(ids_json(ids));
        }
      } else if (args_.batch_size <= 1) {
        prompt = requests[b.members.front()].context;
      } else {
        prompt = Json::array();
        for (size_t i : b.members) prompt.push_back(requests[i].context);
      }
      set_body(b, style_.anthropic
                      ? anthropic_messages_payload(args_.model, prompt, kw, args_.max_gen_toks,
                                                   eos_string())
                      : generation_payload(style_, args_.model, prompt, kw, args_.max_gen_toks,
                                           args_.seed, eos_string()));
      b.what = "generate_until request " + std::to_string(batches.size() + 1) + " (context " +
               short_text(requests[b.members.front()].context) + ")";
      batches.push_back(std::move(b));
    }
  }
  std::vector<std::string> out(requests.size());
  bool warned_null = false;
  send(batches, "generate_until", requests.size(), 0, [&](const Batch& b, const Json& answer) {
    auto res =
        style_.anthropic
            ? std::vector<std::optional<std::string>>{parse_anthropic_message(answer)}
            : parse_generations(style_.endpoint, answer, b.members.size(), args_.think_end_token);
    for (size_t k = 0; k < b.members.size(); ++k) {
      if (!res[k]) {
        if (!warned_null)
          spdlog::warn(
              "API returned null content. Content filled with "
              "LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER.");
        warned_null = true;
        out[b.members[k]] = none_placeholder();
      } else {
        out[b.members[k]] = std::move(*res[k]);
      }
      answered(b.members[k], out[b.members[k]]);
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Chat templates and results facts

std::optional<std::string> ApiLM::chat_template(const std::string& name) const {
  // TemplateLM.chat_template: "" without a tokenizer (the server applies its own template).
  if (!tokenizer_ || args_.kind == ApiKind::kOpenAICompletions) return std::string();
  std::string t = tokenizer_->chat_template(name);
  if (t.empty()) return std::nullopt;
  return t;
}

std::string ApiLM::apply_chat_template(const std::vector<ChatMessage>& messages,
                                       bool add_generation_prompt) const {
  if (style_.endpoint == Endpoint::kCompletions) {
    // The completions endpoint takes text, so the template is applied here with the tokenizer.
    if (!tokenizer_)
      throw UserError(std::string(kind_name(args_.kind)) +
                          " applies chat templates locally and has no tokenizer",
                      {"", 0, 0, "--apply_chat_template"},
                      "tokenizer=<folder with a chat template>, or local-chat-completions");
    return LM::apply_chat_template(messages, add_generation_prompt);
  }
  // The chat endpoint gets the messages; they travel as their JSON text (the reference's
  // JsonChatStr).
  json_chat_contexts_ = true;
  Json a = Json::array();
  for (const auto& m : messages) a.push_back(Json{{"role", m.role}, {"content", m.content}});
  return py::json_dumps(a, {.ensure_ascii = false});
}

Json ApiLM::chat_template_variables() const {
  return tokenizer_ ? chat_template_special_tokens(*tokenizer_) : Json::object();
}

std::optional<TokenizerInfo> ApiLM::tokenizer_info() const {
  if (!tokenizer_) return std::nullopt;
  return tokenizer_facts(*tokenizer_, max_length_);
}

Json ApiLM::performance_stats() const {
  Json out = Json::object();
  for (const auto& p : phases_) {
    // The keys every backend reports (merge adds requests, tokens, seconds over parts), then the
    // HTTP facts. tokens: prompt tokens scored (0 for generation, whose lengths the server knows).
    out[p.name] = {
        {"requests", p.requests},
        {"tokens", p.tokens},
        {"seconds", p.seconds},
        {"tokens_per_second", p.seconds > 0 ? static_cast<double>(p.tokens) / p.seconds : 0.0},
        {"http_requests", p.http_requests},
        {"retries", p.retries}};
  }
  return out;
}

}  // namespace lmeval::api

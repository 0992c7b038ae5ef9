// EngineLM (engine_lm.hpp): servers, spreading, pair encoding, the scoring loops, tokenizer facts.
#include "models/api/engine_lm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/models/rolling_windows.hpp"
#include "lmeval/models/special_tokens.hpp"
#include "models/api/openai_payload.hpp"
#include "models/api/tokenizer_facts.hpp"

namespace lmeval::api {

Json token_list_json(const TokenIds& ids) {
  Json a = Json::array();
  for (TokenId t : ids) a.push_back(t);
  return a;
}

TokenIds truncate_tokens(const TokenIds& t, int64_t n, const std::string& side) {
  const auto size = static_cast<int64_t>(t.size());
  n = std::clamp<int64_t>(n, 0, size);
  if (side == "right") return TokenIds(t.begin(), t.begin() + n);
  if (side == "middle") {
    const int64_t left = n / 2, right = n - left;
    TokenIds out(t.begin(), t.begin() + left);
    out.insert(out.end(), t.end() - right, t.end());
    return out;
  }
  return TokenIds(t.end() - n, t.end());
}

std::string postprocess_generated_text(std::string text, const std::vector<std::string>& until,
                                       const std::optional<std::string>& think_end_token) {
  if (think_end_token && !think_end_token->empty()) {
    const size_t at = text.rfind(*think_end_token);
    if (at != std::string::npos) text = text.substr(at + think_end_token->size());
    text = std::string(unicode::py_lstrip(text));
  }
  for (const auto& s : until) {
    if (s.empty()) continue;
    const size_t at = text.find(s);
    if (at != std::string::npos) text.resize(at);
  }
  return text;
}

EngineLM::EngineLM(std::string name, std::unique_ptr<Tokenizer> tokenizer,
                   std::vector<std::string> secrets)
    : name_(std::move(name)), secrets_(std::move(secrets)), tokenizer_(std::move(tokenizer)) {}

void EngineLM::start_servers(size_t count,
                             const std::function<ServerCommand(int port, size_t i)>& command,
                             int64_t num_concurrent, const std::optional<std::string>& api_key) {
  for (size_t r = 0; r < count; ++r) {
    const int port = free_loopback_port();
    servers_.push_back(std::make_unique<ManagedServer>(command(port, r), port));
    HttpClientOptions o;
    o.max_in_flight = static_cast<size_t>(num_concurrent);
    o.timeout_s = 3600;
    if (api_key) o.headers.push_back("Authorization: Bearer " + *api_key);
    clients_.push_back(std::make_unique<HttpClient>(std::move(o)));
  }
}

std::optional<int64_t> EngineLM::served_max_model_len() const {
  auto body = http_get(servers_.front()->base_url() + "/v1/models");
  if (!body) return std::nullopt;
  Json j = Json::parse(*body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].is_object() && j["data"][0].value("max_model_len", Json()).is_number_integer())
    return j["data"][0]["max_model_len"].get<int64_t>();
  return std::nullopt;
}

std::string EngineLM::eos_text() const {
  std::string eos;
  if (tokenizer_->eos_token().id)
    eos = tokenizer_->decode(std::vector<TokenId>{*tokenizer_->eos_token().id}, false);
  if (eos.empty()) eos = tokenizer_->eos_token().text;
  return eos;
}

void EngineLM::send(const std::vector<Pending>& work, const std::string& path, const char* phase,
                    const std::function<void(size_t, const Json&)>& accept) {
  const size_t n = servers_.size();
  std::vector<std::vector<size_t>> share(n);  // more_itertools.distribute: item i to server i % n
  for (size_t i = 0; i < work.size(); ++i) share[i % n].push_back(i);
  std::mutex mu;
  std::vector<std::string> errors(n);
  std::vector<std::exception_ptr> thrown(n);
  size_t done = 0;
  auto run = [&](size_t s) {
    std::vector<std::string> bodies;
    for (size_t i : share[s]) bodies.push_back(work[i].body);
    auto judge = [&](size_t k, const HttpResponse& r) -> Verdict {
      if (auto v = judge_transport(r)) return *v;
      try {
        Json answer = parse_body(r.body);
        std::lock_guard<std::mutex> lock(mu);
        accept(work[share[s][k]].index, answer);
        ++done;
        if (progress_) progress_(done, work.size(), -1);
      } catch (const MalformedResponse& e) {
        return Verdict::retry(e.what());
      } catch (const RuntimeError& e) {
        return Verdict::fail(e.what());  // an answer that can never be scored
      }
      return Verdict::done();
    };
    std::vector<HttpFailure> failures;
    try {
      failures = clients_[s]->post_all(servers_[s]->base_url() + path, bodies, judge);
    } catch (...) {  // a stop signal (Interrupted) or a failure of the client itself
      thrown[s] = std::current_exception();
      return;
    }
    if (!failures.empty())
      errors[s] = "request " + std::to_string(share[s][failures.front().index] + 1) +
                  " failed after " + std::to_string(failures.front().attempts) +
                  " attempt(s): " + failures.front().message;
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t s = 0; s < n; ++s) threads.emplace_back(run, s);
    for (auto& t : threads) t.join();
  }
  for (size_t s = 0; s < n; ++s)
    if (thrown[s]) std::rethrow_exception(thrown[s]);
  for (size_t s = 0; s < n; ++s)
    if (!errors[s].empty()) {
      std::string m = name_ + ": " + std::string(phase) + " " + errors[s] + " (" +
                      servers_[s]->base_url() + "); the end of the server's log:\n" +
                      servers_[s]->log_tail(15);
      for (const auto& v : secrets_)
        for (size_t p; v.size() >= 4 && (p = m.find(v)) != std::string::npos;)
          m.replace(p, v.size(), "***");
      throw RuntimeError(m);
    }
}

std::vector<EncodedPair> EngineLM::encode_pairs(
    const std::vector<LoglikelihoodRequest>& requests) const {
  std::vector<EncodedPair> enc;
  for (const auto& r : requests) {
    if (r.context.empty()) {
      TokenIds cont = tok_encode(r.continuation, false);
      if (!cont.empty() && cont[0] == prefix_token_id_)
        enc.push_back({{cont[0]}, TokenIds(cont.begin() + 1, cont.end())});
      else
        enc.push_back({{prefix_token_id_}, cont});
      continue;
    }
    std::string context = r.context, continuation = r.continuation;
    const size_t kept = unicode::py_rstrip(context).size();
    if (kept < context.size()) {
      continuation = context.substr(kept) + continuation;
      context.resize(kept);
    }
    TokenIds whole = tok_encode(context + continuation, std::nullopt),
             ctx = tok_encode(context, std::nullopt);
    TokenIds cont(whole.begin() + static_cast<std::ptrdiff_t>(std::min(ctx.size(), whole.size())),
                  whole.end());
    enc.emplace_back(ctx, cont);
  }
  return enc;
}

std::vector<LoglikelihoodResult> EngineLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  const bool sink = streams_answers();
  auto out = score_tokens(encode_pairs(requests), [&](size_t i, const LoglikelihoodResult& r) {
    if (sink) answered(i, r);
  });
  if (!sink)
    for (size_t i = 0; i < out.size(); ++i) answered(i, out[i]);
  return out;
}

std::vector<LoglikelihoodResult> EngineLM::score_tokens(
    const std::vector<EncodedPair>& requests,
    const std::function<void(size_t, const LoglikelihoodResult&)>& on_answer) {
  const ScoringRoute route = scoring_route();
  const int64_t max_len = route.max_ctx_len;
  std::vector<TokenIds> inputs(requests.size());
  std::vector<int64_t> ctxlens(requests.size());
  std::vector<Pending> work;
  bool warned = !route.warn_truncation;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& [ctx, cont] = requests[i];
    TokenIds whole = ctx;
    whole.insert(whole.end(), cont.begin(), cont.end());
    const auto n = static_cast<int64_t>(whole.size());
    if (n > max_len && !warned) {
      spdlog::warn("Context length {} exceeds max length ({}). Truncating context.", n, max_len);
      warned = true;
    }
    inputs[i] = n > max_len ? TokenIds(whole.end() - max_len, whole.end()) : whole;
    ctxlens[i] = static_cast<int64_t>(ctx.size()) - std::max<int64_t>(0, n - max_len);
    work.push_back({i, route.body(inputs[i]).dump()});
  }
  std::vector<LoglikelihoodResult> out(requests.size());
  send(work, route.path, "loglikelihood", [&](size_t i, const Json& answer) {
    out[i] = route.parse(answer, inputs[i], ctxlens[i]);
    on_answer(i, out[i]);
  });
  return out;
}

std::vector<double> EngineLM::rolling_loglikelihoods(const std::vector<std::string>& texts,
                                                     int64_t max_seq_len) {
  std::vector<EncodedPair> windows;
  std::vector<size_t> owner;
  for (size_t t = 0; t < texts.size(); ++t)
    for (auto& w :
         rolling_token_windows(tok_encode(texts[t], std::nullopt), prefix_token_id_, max_seq_len)) {
      windows.emplace_back(std::move(w.first), std::move(w.second));
      owner.push_back(t);
    }
  auto res = score_tokens(windows, [](size_t, const LoglikelihoodResult&) {});
  std::vector<double> out(texts.size(), 0.0);
  for (size_t k = 0; k < res.size(); ++k) out[owner[k]] += res[k].loglikelihood;
  for (size_t t = 0; t < texts.size(); ++t) answered_rolling(t, out[t]);
  return out;
}

std::vector<std::string> EngineLM::send_generations(
    const std::vector<Pending>& work, const std::string& path,
    const std::vector<std::vector<std::string>>& untils,
    const std::optional<std::string>& think_end_token,
    const std::function<std::string(const Json& answer)>& text_of) {
  std::vector<std::string> out(untils.size());
  const bool sink = streams_answers();
  send(work, path, "generate_until", [&](size_t i, const Json& answer) {
    out[i] = postprocess_generated_text(text_of(answer), untils[i], think_end_token);
    if (sink) answered(i, out[i]);
  });
  if (!sink)
    for (size_t i = 0; i < out.size(); ++i) answered(i, out[i]);
  return out;
}

void EngineLM::set_prefix_token_id(const std::optional<int64_t>& given) {
  if (given)
    prefix_token_id_ = static_cast<TokenId>(*given);
  else if (tokenizer_->bos_token().id)
    prefix_token_id_ = *tokenizer_->bos_token().id;
  else if (tokenizer_->eos_token().id)
    prefix_token_id_ = *tokenizer_->eos_token().id;
}

void EngineLM::set_max_length(const std::optional<int64_t>& given) {
  if (given)
    max_length_ = *given;
  else if (auto served = served_max_model_len())
    max_length_ = *served;
}

std::optional<TokenizerInfo> EngineLM::tokenizer_info() const {
  return tokenizer_facts(*tokenizer_, max_length_);
}

std::optional<std::string> EngineLM::chat_template(const std::string& name) const {
  std::string t = tokenizer_->chat_template(name);
  if (t.empty()) return std::nullopt;
  return t;
}

Json EngineLM::chat_template_variables() const { return chat_template_special_tokens(*tokenizer_); }

}  // namespace lmeval::api

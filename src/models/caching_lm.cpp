// CachingLM: looks every request up in the ResponseStore, sends the rest to the model chunk by
// chunk and stores answers as the backend hands them out (LM::AnswerSink), the rest of a chunk's
// when the chunk returns.
#include "lmeval/models/caching_lm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>
#include <type_traits>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/models/response_store.hpp"
#include "response_json.hpp"

namespace lmeval {

namespace {

using response_json::number;

// Requests per model call: small enough that a kill loses little, large enough that a backend
// still fills its batches (hf sorts and packs within one call). LMEVAL_CACHE_CHUNK overrides.
size_t chunk_size() {
  static const size_t n = [] {
    const char* v = std::getenv("LMEVAL_CACHE_CHUNK");
    if (!v) return size_t{256};
    char* end = nullptr;
    errno = 0;
    const long k = std::strtol(v, &end, 10);
    // "abc" and -1 used to fall back to 256 without a word.
    if (end == v || *end != '\0' || errno == ERANGE || k < 1 || k > 1000000)
      throw UserError(std::string("LMEVAL_CACHE_CHUNK is '") + v + "'",
                      {"", 0, 0, "LMEVAL_CACHE_CHUNK"},
                      "a whole number of requests per cache chunk, from 1 to 1000000 (unset: 256)");
    return static_cast<size_t>(k);
  }();
  return n;
}

// Rows handed out by a backend, not yet committed: committed when 256 are waiting or 20 ms after
// the last commit, so a backend answering one request at a time (an API) pays one small
// transaction per answer and a fast one (hf batches) does not pay one per row.
class Pending {
 public:
  explicit Pending(ResponseStore& store) : store_(store), last_(Clock::now()) {}
  void add(std::string key, std::string value) {
    rows_.emplace_back(std::move(key), std::move(value));
    if (rows_.size() >= 256 || Clock::now() - last_ >= std::chrono::milliseconds(20)) flush();
  }
  void flush() {
    // Cleared first: a failed commit is not retried by the unwinding that follows it.
    auto rows = std::move(rows_);
    rows_.clear();
    store_.put(rows);
    last_ = Clock::now();
  }
  // While another error unwinds: that error is the one to report; a cache that cannot be written
  // as well is said in a warning.
  void flush_quietly(const char* method) noexcept {
    try {
      flush();
    } catch (const std::exception& e) {
      spdlog::warn("--use_cache: the last {} answers received could not be stored: {}", method,
                   e.what());
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  ResponseStore& store_;
  std::vector<std::pair<std::string, std::string>> rows_;
  Clock::time_point last_;
};

template <class R, class Take>
AnswerSink sink_for(Take& take) {
  AnswerSink s;
  if constexpr (std::is_same_v<R, LoglikelihoodResult>)
    s.loglikelihood = [&take](size_t i, const LoglikelihoodResult& r) { take(i, r); };
  else if constexpr (std::is_same_v<R, double>)
    s.loglikelihood_rolling = [&take](size_t i, double v) { take(i, v); };
  else
    s.generate_until = [&take](size_t i, const std::string& t) { take(i, t); };
  return s;
}

class CachingLM : public LM {
 public:
  CachingLM(std::unique_ptr<LM> inner, std::filesystem::path file, const Json& identity)
      : inner_(std::move(inner)), store_(std::move(file)), identity_(py::json_dumps(identity)) {}

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& reqs) override {
    std::vector<std::string> keys;
    for (const auto& r : reqs)
      keys.push_back(key("loglikelihood", Json::array({r.context, r.continuation})));
    return run<LoglikelihoodResult, LoglikelihoodRequest>(
        "loglikelihood", reqs, keys, [&](const auto& todo) { return inner_->loglikelihood(todo); },
        [](const LoglikelihoodResult& r) {
          return Json::array({number(r.loglikelihood), r.is_greedy});
        },
        [](const Json& v) {
          return LoglikelihoodResult{number(v.at(0)), v.at(1).get<bool>()};
        },
        [](const LoglikelihoodRequest&) { return true; });
  }

  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override {
    std::vector<std::string> keys;
    for (const auto& t : texts) keys.push_back(key("loglikelihood_rolling", Json::array({t})));
    return run<double, std::string>(
        "loglikelihood_rolling", texts, keys,
        [&](const auto& todo) { return inner_->loglikelihood_rolling(todo); },
        [](double v) { return number(v); }, [](const Json& v) { return number(v); },
        [](const std::string&) { return true; });
  }

  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& reqs) override {
    std::vector<std::string> keys;
    for (const auto& r : reqs)
      keys.push_back(key("generate_until", Json::array({r.context, r.gen_kwargs})));
    return run<std::string, GenerationRequest>(
        "generate_until", reqs, keys,
        [&](const auto& todo) { return inner_->generate_until(todo); },
        [](const std::string& v) { return Json(v); },
        [](const Json& v) { return v.get<std::string>(); },
        [](const GenerationRequest& r) {
          return !(r.gen_kwargs.is_object() && r.gen_kwargs.value("do_sample", false));
        });
  }

  Json model_info() const override { return inner_->model_info(); }
  std::optional<TokenizerInfo> tokenizer_info() const override { return inner_->tokenizer_info(); }
  std::vector<int> batch_sizes() const override { return inner_->batch_sizes(); }
  Json performance_stats() const override { return inner_->performance_stats(); }
  std::optional<std::string> chat_template(const std::string& name) const override {
    return inner_->chat_template(name);
  }
  std::string apply_chat_template(const std::vector<ChatMessage>& m, bool g) const override {
    return inner_->apply_chat_template(m, g);
  }
  Json chat_template_variables() const override { return inner_->chat_template_variables(); }
  std::optional<size_t> token_count(const std::string& text) const override {
    return inner_->token_count(text);
  }

 private:
  // sha256 of json.dumps([identity, method, *arguments]).
  std::string key(const std::string& method, const Json& args) const {
    Json k = Json::array({identity_, method});
    for (const auto& a : args) k.push_back(a);
    return sha256_hex(py::json_dumps(k, {.ensure_ascii = true}));
  }

  template <class R, class Q, class Call, class ToJson, class FromJson, class Cacheable>
  std::vector<R> run(const char* method, const std::vector<Q>& reqs,
                     const std::vector<std::string>& keys, Call call, ToJson to_json,
                     FromJson from_json, Cacheable cacheable) {
    std::vector<R> out(reqs.size());
    std::vector<size_t> todo;
    for (size_t i = 0; i < reqs.size(); ++i) {
      std::optional<std::string> hit;
      if (cacheable(reqs[i])) hit = store_.get(keys[i]);
      if (!hit) {
        todo.push_back(i);
        continue;
      }
      try {
        out[i] = from_json(Json::parse(*hit));
      } catch (const std::exception& e) {
        throw RuntimeError("response cache " + store_.file().string() + ": row " + keys[i] +
                           " of " + method + " cannot be decoded (" + e.what() +
                           "; expected a file written by lm-eval " +
                           "--use_cache; delete it to start over)");
      }
    }
    size_t cached = reqs.size() - todo.size();
    spdlog::info("--use_cache: {} of {} {} requests answered from {}", cached, reqs.size(), method,
                 store_.file().string());
    for (size_t start = 0; start < todo.size(); start += chunk_size()) {
      size_t end = std::min(todo.size(), start + chunk_size());
      std::vector<Q> chunk;
      for (size_t j = start; j < end; ++j) chunk.push_back(reqs[todo[j]]);
      size_t base = cached + start;
      if (progress_)
        inner_->set_progress([this, base, n = reqs.size()](size_t done, size_t, int64_t tokens) {
          progress_(base + done, n, tokens);
        });
      // Answers the backend hands out while it runs are stored in small transactions as they
      // come; on a stop or a failure the ones not yet committed are committed before unwinding.
      Pending pending(store_);
      std::vector<char> taken(chunk.size(), 0);
      auto take = [&](size_t j, const R& r) {
        if (j >= chunk.size() || taken[j]) return;
        taken[j] = 1;
        if (cacheable(chunk[j]))
          pending.add(keys[todo[start + j]],
                      to_json(r).dump(-1, ' ', false, Json::error_handler_t::replace));
      };
      inner_->set_answer_sink(sink_for<R>(take));
      std::vector<R> fresh;
      try {
        fresh = call(chunk);
      } catch (...) {
        inner_->set_answer_sink({});
        pending.flush_quietly(method);
        throw;
      }
      inner_->set_answer_sink({});
      if (fresh.size() != chunk.size()) {
        pending.flush_quietly(method);
        throw RuntimeError(std::string("the model returned ") + std::to_string(fresh.size()) +
                           " answers for " + std::to_string(chunk.size()) + " " + method +
                           " requests");
      }
      for (size_t j = start; j < end; ++j) {
        out[todo[j]] = fresh[j - start];
        take(j - start, fresh[j - start]);
      }
      pending.flush();
    }
    inner_->set_progress(nullptr);
    if (progress_) progress_(reqs.size(), reqs.size(), -1);
    return out;
  }

  std::unique_ptr<LM> inner_;
  ResponseStore store_;
  std::string identity_;
};

}  // namespace

// model_args that change how fast or by what credentials answers come, not the answers: a rerun
// with more threads or a rotated API key still finds them.
const std::set<std::string> kSpeedOrAccessOnly = {
    "batch_size",     "max_batch_size", "threads", "parallelize",  // hf
    "num_concurrent", "max_retries",    "timeout", "verify_certificate",
    "ca_cert_path",  // API models
    "api_key",        "auth_token",     "header"};

Json cache_identity(const std::string& model, const Json& model_args) {
  Json args = Json::object();
  if (model_args.is_object())
    for (auto it = model_args.begin(); it != model_args.end(); ++it)
      if (!kSpeedOrAccessOnly.count(it.key())) args[it.key()] = it.value();
  return Json{{"model", model}, {"model_args", args}};
}

std::unique_ptr<LM> make_caching_lm(std::unique_ptr<LM> inner, const std::filesystem::path& path,
                                    const Json& identity) {
  std::filesystem::path file = path;
  file += "_rank0.db";
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  return std::make_unique<CachingLM>(std::move(inner), file, identity);
}

}  // namespace lmeval

// CachingLM: looks every request up in the ResponseStore, sends the rest to the model chunk by
// chunk and stores each chunk's answers before asking for the next.
#include "lmeval/models/caching_lm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>

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
      auto fresh = call(chunk);
      if (fresh.size() != chunk.size())
        throw RuntimeError(std::string("the model returned ") + std::to_string(fresh.size()) +
                           " answers for " + std::to_string(chunk.size()) + " " + method +
                           " requests");
      std::vector<std::pair<std::string, std::string>> rows;
      for (size_t j = start; j < end; ++j) {
        const R& r = fresh[j - start];
        out[todo[j]] = r;
        if (cacheable(reqs[todo[j]]))
          rows.emplace_back(keys[todo[j]],
                            to_json(r).dump(-1, ' ', false, Json::error_handler_t::replace));
      }
      store_.put(rows);
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

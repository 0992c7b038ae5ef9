// ReplayLM: the merged parts' answers served as a model, each checked against its request.
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/models/shard.hpp"
#include "response_json.hpp"

namespace lmeval {

namespace {

struct Call {
  std::string type;
  size_t requests = 0;
  std::vector<Json> keys, answers;  // null where no part answered (yet)
};

class ReplayLM : public LM {
 public:
  ReplayLM(const std::vector<Json>& parts, const std::vector<std::string>& names) {
    int count = 0;
    std::map<int, std::string> seen;
    Json config;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Json& part = parts[p];
      const std::string& name = names[p];
      if (!part.is_object() || part.value("lm_eval_partial", 0) != 1 || !part.contains("shard") ||
          !part.contains("calls") || !part.contains("config") || !part.contains("model"))
        throw UserError("not a partial results file of `lm-eval run --shard`", {name, 0, 0, ""},
                        "a shard_<I>of<N>.json written by lm-eval run --shard I/N");
      int index = part["shard"][0].get<int>(), n = part["shard"][1].get<int>();
      Json cfg = part["config"];
      // Where each machine wrote its part and kept its cache may differ; the merged results
      // record the first part's.
      for (const char* k : {"shard_index", "output_path", "use_cache", "verbosity"}) cfg.erase(k);
      if (p == 0) {
        count = n;
        config = cfg;
      } else if (n != count) {
        throw UserError("part " + std::to_string(index) + "/" + std::to_string(n) + " does not belong with " +
                            names[0] + " (split in " + std::to_string(count) + ")",
                        {name, 0, 0, "shard"}, "parts of one --shard I/N run");
      } else if (cfg != config) {
        throw UserError("this part was run with another configuration than " + names[0],
                        {name, 0, 0, "config"}, "parts of one run, differing only in --shard I");
      }
      if (!seen.emplace(index, name).second)
        throw UserError("part " + std::to_string(index) + "/" + std::to_string(n) + " is given twice (also " +
                            seen[index] + ")",
                        {name, 0, 0, "shard"}, "each part once");
      add_calls(part["calls"], name);
      add_model(part["model"], index == 1);
    }
    std::string missing;
    for (int i = 1; i <= count; ++i)
      if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
    if (!missing.empty())
      throw UserError("parts missing: " + missing, {names[0], 0, 0, "shard"}, "all " + std::to_string(count) + " parts");
    for (const auto& c : calls_)
      for (size_t i = 0; i < c.requests; ++i)
        if (c.answers[i].is_null())
          throw UserError("no part answered " + c.type + " request " + std::to_string(i),
                          {names[0], 0, 0, "calls"}, "parts that cover every request");
  }

  std::vector<LoglikelihoodResult> loglikelihood(const std::vector<LoglikelihoodRequest>& r) override {
    return replay<LoglikelihoodResult>("loglikelihood", r);
  }
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& t) override {
    return replay<double>("loglikelihood_rolling", t);
  }
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& r) override {
    return replay<std::string>("generate_until", r);
  }

  Json model_info() const override { return model_.value("model_info", Json::object()); }
  std::optional<TokenizerInfo> tokenizer_info() const override {
    if (!model_.contains("tokenizer_info")) return std::nullopt;
    const Json& t = model_["tokenizer_info"];
    TokenizerInfo info;
    auto str = [&](const char* k, std::optional<std::string>& v) {
      if (t.contains(k) && t[k].is_string()) v = t[k].get<std::string>();
    };
    auto id = [&](const char* k, std::optional<int64_t>& v) {
      if (t.contains(k) && t[k].is_number_integer()) v = t[k].get<int64_t>();
    };
    str("pad_token", info.pad_token);
    str("eos_token", info.eos_token);
    str("bos_token", info.bos_token);
    id("pad_token_id", info.pad_token_id);
    id("eos_token_id", info.eos_token_id);
    id("bos_token_id", info.bos_token_id);
    id("eot_token_id", info.eot_token_id);
    info.max_length = t.value("max_length", int64_t{2048});
    return info;
  }
  std::vector<int> batch_sizes() const override { return model_.value("batch_sizes", std::vector<int>{}); }
  Json performance_stats() const override { return performance_; }
  std::optional<std::string> chat_template(const std::string&) const override {
    const Json& t = model_.value("chat_template", Json());
    return t.is_string() ? std::optional<std::string>(t.get<std::string>()) : std::nullopt;
  }
  std::string apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const override {
    auto it = chat_.find(chat_key(messages, add_generation_prompt));
    if (it == chat_.end())
      throw UserError("the parts hold no chat rendering of a prompt this merge builds", {"", 0, 0, "chat"},
                      "parts made from the same tasks, data and chat template");
    return it->get<std::string>();
  }

 private:
  void add_calls(const Json& calls, const std::string& name) {
    if (calls_.empty())
      for (const auto& c : calls) {
        Call call;
        call.type = c.at("type").get<std::string>();
        call.requests = c.at("requests").get<size_t>();
        call.keys.assign(call.requests, Json());
        call.answers.assign(call.requests, Json());
        calls_.push_back(std::move(call));
      }
    if (calls.size() != calls_.size())
      throw UserError("this part made " + std::to_string(calls.size()) + " model calls, the first part " +
                          std::to_string(calls_.size()),
                      {name, 0, 0, "calls"}, "parts of one run");
    for (size_t k = 0; k < calls.size(); ++k) {
      Call& call = calls_[k];
      if (calls[k].at("type") != call.type || calls[k].at("requests").get<size_t>() != call.requests)
        throw UserError("model call " + std::to_string(k) + " differs from the first part's",
                        {name, 0, 0, "calls[" + std::to_string(k) + "]"}, "parts of one run");
      for (const auto& a : calls[k].at("answers")) {
        size_t i = a.at(0).get<size_t>();
        if (i >= call.requests || !call.answers[i].is_null())
          throw UserError(call.type + " request " + std::to_string(i) + " is out of range or answered twice",
                          {name, 0, 0, "calls[" + std::to_string(k) + "]"}, "parts of one run");
        call.keys[i] = a.at(1);
        call.answers[i] = a.at(2);
      }
    }
  }

  void add_model(const Json& m, bool first) {
    if (first) model_ = m;
    Json chat = m.value("chat", Json::object());
    for (auto it = chat.begin(); it != chat.end(); ++it) chat_[it.key()] = it.value();
    // Requests, tokens and seconds add up over parts; the rate is recomputed.
    Json perf = m.value("performance", Json::object());
    for (const auto& [phase, stats] : perf.items()) {
      Json& sum = performance_[phase];
      for (const char* k : {"requests", "tokens", "seconds"})
        if (stats.contains(k)) {
          if (!sum.contains(k)) sum[k] = stats[k];
          else if (stats[k].is_number_integer()) sum[k] = sum[k].get<int64_t>() + stats[k].get<int64_t>();
          else sum[k] = sum[k].get<double>() + stats[k].get<double>();
        }
      if (stats.contains("tokens_per_second")) {
        double s = sum.value("seconds", 0.0);
        sum["tokens_per_second"] = s > 0 ? sum.value("tokens", 0.0) / s : 0.0;
      }
    }
  }

  template <class R, class Q>
  std::vector<R> replay(const char* type, const std::vector<Q>& requests) {
    if (next_ >= calls_.size() || calls_[next_].type != type || calls_[next_].requests != requests.size())
      throw UserError(std::string("this merge builds other model calls than the parts recorded (call ") +
                          std::to_string(next_) + ": " + type + " x " + std::to_string(requests.size()) + ")",
                      {"", 0, 0, "calls"}, "the same tasks, data and options as the shard runs");
    const Call& call = calls_[next_++];
    std::vector<R> out(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      if (call.keys[i] != sha256_hex(py::json_dumps(response_json::arguments(requests[i]))))
        throw UserError(std::string(type) + " request " + std::to_string(i) + " differs from the one the parts answered",
                        {"", 0, 0, "calls"}, "the same tasks, data and options as the shard runs");
      response_json::decode(call.answers[i], out[i]);
    }
    if (progress_) progress_(requests.size(), requests.size(), -1);
    return out;
  }

  std::vector<Call> calls_;
  size_t next_ = 0;
  Json model_ = Json::object();
  Json chat_ = Json::object();
  Json performance_ = Json::object();
};

}  // namespace

std::unique_ptr<LM> make_replay_lm(const std::vector<Json>& parts, const std::vector<std::string>& names) {
  if (parts.empty()) throw UserError("no parts to merge", {"", 0, 0, "PARTS"}, "the partial files of every shard");
  return std::make_unique<ReplayLM>(parts, names);
}

}  // namespace lmeval

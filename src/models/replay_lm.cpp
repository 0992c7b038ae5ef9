// ReplayLM: the merged parts' answers served as a model, each checked against its request.
#include <map>
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
  std::vector<int> answered_by;     // the shard index (1..N) of each answer; 0 where none
};

const char* const kPartExpected = "a shard_<I>of<N>.json written by lm-eval run --shard I/N";

bool is_count(const Json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

std::string json_type(const Json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

// A part file, checked field by field before anything reads it, so a damaged or hand-edited
// part is named with the field at fault instead of failing deep inside the merge.
class PartChecker {
 public:
  explicit PartChecker(const std::string& file) : file_(file) {}

  [[noreturn]] void bad(const std::string& field, const std::string& what,
                        const std::string& expected) const {
    throw UserError(what, {file_, 0, 0, field}, expected);
  }
  void expect(bool ok, const Json& v, const std::string& field, const std::string& expected) const {
    if (ok) return;
    // An array of the wrong length or items said only "is an array (expected an array ...)".
    if (v.is_array()) {
      std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (text.size() > 80) text = text.substr(0, 77) + "...";
      bad(field,
          "`" + field + "` is an array of " + std::to_string(v.size()) +
              (v.size() == 1 ? " item, " : " items, ") + text,
          expected);
    }
    bad(field, "`" + field + "` is " + json_type(v), expected);
  }

  void check(const Json& part) const {
    if (!part.is_object() || part.value("lm_eval_partial", Json()) != 1)
      bad("", "not a partial results file of `lm-eval run --shard`", kPartExpected);
    for (const char* k : {"shard", "calls", "config", "model"})
      if (!part.contains(k)) bad(k, std::string("`") + k + "` is missing", kPartExpected);
    const Json& shard = part["shard"];
    expect(shard.is_array() && shard.size() == 2 && shard[0].is_number_integer() &&
               shard[1].is_number_integer(),
           shard, "shard", "an array [I, N] of two integers");
    int64_t i = shard[0].get<int64_t>(), n = shard[1].get<int64_t>();
    if (n < 1 || i < 1 || i > n || n > 999999)  // parse_shard_spec's bounds
      bad("shard", "invalid shard label " + std::to_string(i) + "/" + std::to_string(n),
          "I/N with 1 <= I <= N");
    expect(part["config"].is_object(), part["config"], "config", "an object");
    check_model(part["model"]);
    const Json& calls = part["calls"];
    expect(calls.is_array(), calls, "calls", "an array");
    for (size_t k = 0; k < calls.size(); ++k)
      check_call(calls[k], "calls[" + std::to_string(k) + "]");
  }

 private:
  void check_model(const Json& m) const {
    expect(m.is_object(), m, "model", "an object");
    auto object_field = [&](const char* k) {
      if (m.contains(k)) expect(m[k].is_object(), m[k], std::string("model.") + k, "an object");
    };
    object_field("model_info");
    object_field("tokenizer_info");
    object_field("chat");
    object_field("performance");
    if (m.contains("batch_sizes")) {
      const Json& b = m["batch_sizes"];
      expect(b.is_array(), b, "model.batch_sizes", "an array of integers");
      for (size_t j = 0; j < b.size(); ++j)
        expect(b[j].is_number_integer(), b[j], "model.batch_sizes[" + std::to_string(j) + "]",
               "an integer");
    }
    if (m.contains("chat"))
      for (const auto& [key, text] : m["chat"].items())
        expect(text.is_string(), text, "model.chat." + key, "the rendered prompt (a string)");
    if (m.contains("performance"))
      for (const auto& [phase, stats] : m["performance"].items()) {
        std::string f = "model.performance." + phase;
        expect(stats.is_object(), stats, f, "an object");
        for (const char* k : {"requests", "tokens", "seconds", "tokens_per_second"})
          if (stats.contains(k)) expect(stats[k].is_number(), stats[k], f + "." + k, "a number");
      }
  }

  void check_call(const Json& c, const std::string& f) const {
    expect(c.is_object(), c, f, "an object with type, requests and answers");
    for (const char* k : {"type", "requests", "answers"})
      if (!c.contains(k))
        bad(f + "." + k, "`" + f + "." + k + "` is missing",
            "a call as lm-eval run --shard records it");
    const Json& type = c["type"];
    expect(type.is_string(), type, f + ".type",
           "loglikelihood, loglikelihood_rolling or generate_until");
    const std::string& t = type.get_ref<const std::string&>();
    if (t != "loglikelihood" && t != "loglikelihood_rolling" && t != "generate_until")
      bad(f + ".type", "unknown request type '" + t + "'",
          "loglikelihood, loglikelihood_rolling or generate_until");
    expect(is_count(c["requests"]), c["requests"], f + ".requests", "a non-negative integer");
    if (c.contains("shard_requests"))
      expect(is_count(c["shard_requests"]), c["shard_requests"], f + ".shard_requests",
             "a non-negative integer");
    const Json& answers = c["answers"];
    expect(answers.is_array(), answers, f + ".answers",
           "an array of [index, request hash, answer]");
    for (size_t j = 0; j < answers.size(); ++j) {
      const Json& a = answers[j];
      std::string af = f + ".answers[" + std::to_string(j) + "]";
      expect(a.is_array() && a.size() == 3, a, af, "an array [index, request hash, answer]");
      expect(is_count(a[0]), a[0], af + "[0]", "the request's index (a non-negative integer)");
      expect(a[1].is_string(), a[1], af + "[1]", "the request's sha256 (a string)");
      check_answer(t, a[2], af + "[2]");
    }
  }

  void check_answer(const std::string& type, const Json& v, const std::string& f) const {
    auto is_number = [](const Json& x) {
      return x.is_number() || (x.is_string() && (x == "inf" || x == "-inf" || x == "nan"));
    };
    if (type == "loglikelihood")
      expect(v.is_array() && v.size() == 2 && is_number(v[0]) && v[1].is_boolean(), v, f,
             "[log-likelihood, is_greedy] (a number and a boolean)");
    else if (type == "loglikelihood_rolling")
      expect(is_number(v), v, f, "a log-likelihood (a number)");
    else
      expect(v.is_string(), v, f, "the generated text (a string)");
  }

  std::string file_;
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
      PartChecker(name).check(part);
      int index = part["shard"][0].get<int>(), n = part["shard"][1].get<int>();
      Json cfg = part["config"];
      // Where each machine wrote its part, kept its cache and ran (cuda:LOCAL_RANK under
      // torchrun) may differ; the merged results record the first part's.
      for (const char* k : {"shard_index", "output_path", "use_cache", "verbosity", "device"})
        cfg.erase(k);
      if (p == 0) {
        count = n;
        config = cfg;
      } else if (n != count) {
        throw UserError("part " + std::to_string(index) + "/" + std::to_string(n) +
                            " does not belong with " + names[0] + " (split in " +
                            std::to_string(count) + ")",
                        {name, 0, 0, "shard"}, "parts of one --shard I/N run");
      } else if (cfg != config) {
        throw UserError("this part was run with another configuration than " + names[0],
                        {name, 0, 0, "config"}, "parts of one run, differing only in --shard I");
      }
      if (!seen.emplace(index, name).second)
        throw UserError("part " + std::to_string(index) + "/" + std::to_string(n) +
                            " is given twice (also " + seen[index] + ")",
                        {name, 0, 0, "shard"}, "each part once");
      add_calls(part["calls"], name, index);
      add_model(part["model"], index == 1);
    }
    std::string missing;
    for (int i = 1; i <= count; ++i)
      if (!seen.count(i))
        missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
    if (!missing.empty())
      throw UserError("parts missing: " + missing, {names[0], 0, 0, "shard"},
                      "all " + std::to_string(count) + " parts");
    for (size_t k = 0; k < calls_.size(); ++k) {
      const Call& c = calls_[k];
      for (size_t i = 0; i < c.requests; ++i)
        if (c.answers[i].is_null()) {
          int shard = responsible_shard(c, i);
          throw UserError("no part answered " + c.type + " request " + std::to_string(i) +
                              " of model call " + std::to_string(k) + "; it lies in part " +
                              std::to_string(shard) + "/" + std::to_string(count) + "'s range",
                          {seen[shard], 0, 0, "calls[" + std::to_string(k) + "].answers"},
                          "parts that cover every request (rerun that shard)");
        }
    }
  }

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& r) override {
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
  std::vector<int> batch_sizes() const override {
    return model_.value("batch_sizes", std::vector<int>{});
  }
  Json performance_stats() const override { return performance_; }
  std::optional<std::string> chat_template(const std::string&) const override {
    const Json& t = model_.value("chat_template", Json());
    return t.is_string() ? std::optional<std::string>(t.get<std::string>()) : std::nullopt;
  }
  std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const override {
    auto it = chat_.find(chat_key(messages, add_generation_prompt));
    if (it == chat_.end())
      throw UserError("the parts hold no chat rendering of a prompt this merge builds",
                      {"", 0, 0, "chat"}, "parts made from the same tasks, data and chat template");
    return it->get<std::string>();
  }

 private:
  // Parts answer contiguous runs of requests in shard order (assign_parts), so an unanswered
  // request belongs to the part whose answers surround it, or to one of the parts between the
  // neighbouring answers' parts (the first of them with no answer in this call, else the earlier
  // neighbour).
  int responsible_shard(const Call& c, size_t i) const {
    int before = 0, after = 0;
    for (size_t j = i; j-- > 0;)
      if (c.answered_by[j]) {
        before = c.answered_by[j];
        break;
      }
    for (size_t j = i + 1; j < c.requests; ++j)
      if (c.answered_by[j]) {
        after = c.answered_by[j];
        break;
      }
    if (before == 0) before = 1;
    if (after == 0) after = before;
    std::set<int> present(c.answered_by.begin(), c.answered_by.end());
    for (int s = before; s <= after; ++s)
      if (!present.count(s)) return s;
    return before;
  }

  void add_calls(const Json& calls, const std::string& name, int shard) {
    if (calls_.empty())
      for (const auto& c : calls) {
        Call call;
        call.type = c.at("type").get<std::string>();
        call.requests = c.at("requests").get<size_t>();
        call.keys.assign(call.requests, Json());
        call.answers.assign(call.requests, Json());
        call.answered_by.assign(call.requests, 0);
        calls_.push_back(std::move(call));
      }
    if (calls.size() != calls_.size())
      throw UserError("this part made " + std::to_string(calls.size()) +
                          " model calls, the first part " + std::to_string(calls_.size()),
                      {name, 0, 0, "calls"}, "parts of one run");
    for (size_t k = 0; k < calls.size(); ++k) {
      Call& call = calls_[k];
      if (calls[k].at("type") != call.type ||
          calls[k].at("requests").get<size_t>() != call.requests)
        throw UserError("model call " + std::to_string(k) + " differs from the first part's",
                        {name, 0, 0, "calls[" + std::to_string(k) + "]"}, "parts of one run");
      // The part's own count of its requests: an answer dropped from this part is its fault.
      const Json& own = calls[k].value("shard_requests", Json());
      if (is_count(own) && own.get<size_t>() != calls[k]["answers"].size())
        throw UserError("part " + std::to_string(shard) + " holds " +
                            std::to_string(calls[k]["answers"].size()) + " answers of its " +
                            std::to_string(own.get<size_t>()) + " " + call.type + " requests",
                        {name, 0, 0, "calls[" + std::to_string(k) + "].answers"},
                        "every answer of the shard's requests (rerun this shard)");
      for (const auto& a : calls[k].at("answers")) {
        size_t i = a.at(0).get<size_t>();
        if (i >= call.requests || !call.answers[i].is_null())
          throw UserError(
              call.type + " request " + std::to_string(i) + " is out of range or answered twice",
              {name, 0, 0, "calls[" + std::to_string(k) + "]"}, "parts of one run");
        call.keys[i] = a.at(1);
        call.answers[i] = a.at(2);
        call.answered_by[i] = shard;
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
          if (!sum.contains(k))
            sum[k] = stats[k];
          else if (stats[k].is_number_integer())
            sum[k] = sum[k].get<int64_t>() + stats[k].get<int64_t>();
          else
            sum[k] = sum[k].get<double>() + stats[k].get<double>();
        }
      if (stats.contains("tokens_per_second")) {
        double s = sum.value("seconds", 0.0);
        sum["tokens_per_second"] = s > 0 ? sum.value("tokens", 0.0) / s : 0.0;
      }
    }
  }

  template <class R, class Q>
  std::vector<R> replay(const char* type, const std::vector<Q>& requests) {
    if (next_ >= calls_.size() || calls_[next_].type != type ||
        calls_[next_].requests != requests.size())
      throw UserError(
          std::string("this merge builds other model calls than the parts recorded (call ") +
              std::to_string(next_) + ": " + type + " x " + std::to_string(requests.size()) + ")",
          {"", 0, 0, "calls"}, "the same tasks, data and options as the shard runs");
    const Call& call = calls_[next_++];
    std::vector<R> out(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      if (call.keys[i] != sha256_hex(py::json_dumps(response_json::arguments(requests[i]))))
        throw UserError(std::string(type) + " request " + std::to_string(i) +
                            " differs from the one the parts answered",
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

std::unique_ptr<LM> make_replay_lm(const std::vector<Json>& parts,
                                   const std::vector<std::string>& names) {
  if (parts.empty())
    throw UserError("no parts to merge", {"", 0, 0, "PARTS"}, "the partial files of every shard");
  return std::make_unique<ReplayLM>(parts, names);
}

}  // namespace lmeval

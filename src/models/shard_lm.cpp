// ShardRecorder: splits each model call by weight, answers its own part, records the answers.
#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/models/shard.hpp"
#include "response_json.hpp"

namespace lmeval {

namespace {

uint64_t max_gen_toks(const GenerationRequest& r) {
  if (r.gen_kwargs.is_object() && r.gen_kwargs.contains("max_gen_toks") &&
      r.gen_kwargs["max_gen_toks"].is_number_integer())
    return static_cast<uint64_t>(std::max<int64_t>(0, r.gen_kwargs["max_gen_toks"].get<int64_t>()));
  return 256;  // the reference's default
}

}  // namespace

std::vector<int> assign_parts(const std::vector<uint64_t>& weights, int count) {
  std::vector<int> part(weights.size(), 0);
  unsigned __int128 total = 0;
  for (auto w : weights) total += w;
  unsigned __int128 before = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    unsigned __int128 k;
    if (total == 0) {
      k = static_cast<unsigned __int128>(i) * static_cast<unsigned>(count) / weights.size();
    } else {
      // floor(count * midpoint / total), midpoint = before + w/2, in integers.
      k = static_cast<unsigned __int128>(count) * (2 * before + weights[i]) / (2 * total);
    }
    part[i] = static_cast<int>(std::min<unsigned __int128>(k, static_cast<unsigned>(count - 1)));
    before += weights[i];
  }
  return part;
}

std::string chat_key(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  Json j = Json::array({add_generation_prompt});
  for (const auto& m : messages) j.push_back(Json::array({m.role, m.content}));
  return sha256_hex(j.dump());
}

ShardRecorder::ShardRecorder(std::unique_ptr<LM> inner, ShardSpec spec)
    : inner_(std::move(inner)), spec_(spec) {}

uint64_t ShardRecorder::weight(const std::string& text) const {
  if (auto n = inner_->token_count(text)) return *n;
  return text.size();
}

template <class R, class Q, class Call>
std::vector<R> ShardRecorder::run(const char* type, const std::vector<Q>& requests, Call call) {
  std::vector<uint64_t> weights;
  weights.reserve(requests.size());
  for (const auto& q : requests) {
    if constexpr (std::is_same_v<Q, LoglikelihoodRequest>)
      weights.push_back(weight(q.context) + weight(q.continuation));
    else if constexpr (std::is_same_v<Q, GenerationRequest>)
      weights.push_back(weight(q.context) + max_gen_toks(q));
    else
      weights.push_back(weight(q));
  }
  std::vector<int> part = assign_parts(weights, spec_.count);
  std::vector<Q> mine;
  std::vector<size_t> where;
  uint64_t my_weight = 0, total = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    total += weights[i];
    if (part[i] != spec_.index - 1) continue;
    mine.push_back(requests[i]);
    where.push_back(i);
    my_weight += weights[i];
  }
  inner_->set_progress(progress_);
  std::vector<R> answers = mine.empty() ? std::vector<R>{} : call(mine);
  inner_->set_progress(nullptr);
  if (answers.size() != mine.size())
    throw RuntimeError(std::string("the model returned ") + std::to_string(answers.size()) +
                       " answers for " + std::to_string(mine.size()) + " " + type + " requests");
  std::vector<R> out(requests.size());
  Json recorded = Json::array();
  for (size_t j = 0; j < mine.size(); ++j) {
    out[where[j]] = answers[j];
    recorded.push_back(
        Json::array({where[j], sha256_hex(py::json_dumps(response_json::arguments(mine[j]))),
                     response_json::encode(answers[j])}));
  }
  calls_.push_back({{"type", type},
                    {"requests", requests.size()},
                    {"weight", total},
                    {"shard_requests", mine.size()},
                    {"shard_weight", my_weight},
                    {"answers", std::move(recorded)}});
  return out;
}

std::vector<LoglikelihoodResult> ShardRecorder::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  return run<LoglikelihoodResult>("loglikelihood", requests,
                                  [&](const auto& q) { return inner_->loglikelihood(q); });
}

std::vector<double> ShardRecorder::loglikelihood_rolling(const std::vector<std::string>& texts) {
  return run<double>("loglikelihood_rolling", texts,
                     [&](const auto& q) { return inner_->loglikelihood_rolling(q); });
}

std::vector<std::string> ShardRecorder::generate_until(
    const std::vector<GenerationRequest>& requests) {
  return run<std::string>("generate_until", requests,
                          [&](const auto& q) { return inner_->generate_until(q); });
}

std::string ShardRecorder::apply_chat_template(const std::vector<ChatMessage>& messages,
                                               bool add_generation_prompt) const {
  std::string text = inner_->apply_chat_template(messages, add_generation_prompt);
  chat_[chat_key(messages, add_generation_prompt)] = text;
  return text;
}

Json ShardRecorder::partial() const {
  Json model = Json::object();
  model["model_info"] = inner_->model_info();
  if (auto t = inner_->tokenizer_info()) {
    model["tokenizer_info"] = {{"pad_token", t->pad_token ? Json(*t->pad_token) : Json()},
                               {"eos_token", t->eos_token ? Json(*t->eos_token) : Json()},
                               {"bos_token", t->bos_token ? Json(*t->bos_token) : Json()},
                               {"pad_token_id", t->pad_token_id ? Json(*t->pad_token_id) : Json()},
                               {"eos_token_id", t->eos_token_id ? Json(*t->eos_token_id) : Json()},
                               {"bos_token_id", t->bos_token_id ? Json(*t->bos_token_id) : Json()},
                               {"eot_token_id", t->eot_token_id ? Json(*t->eot_token_id) : Json()},
                               {"max_length", t->max_length}};
  }
  model["batch_sizes"] = inner_->batch_sizes();
  model["performance"] = inner_->performance_stats();
  model["chat"] = chat_;
  return {{"lm_eval_partial", 1},
          {"shard", {spec_.index, spec_.count}},
          {"model", model},
          {"calls", calls_}};
}

}  // namespace lmeval

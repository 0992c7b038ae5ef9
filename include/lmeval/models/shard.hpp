// --shard I/N and `lm-eval merge`: a shard run answers a deterministic part of every model call
// and records those answers; merge replays the recorded answers of all parts as a model, so the
// merged run scores exactly what one whole run would have.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmeval/config/shard_spec.hpp"
#include "lmeval/models/lm.hpp"

namespace lmeval {

// Which part (0-based) each request of one call belongs to: contiguous runs of requests, cut
// where the running total of `weights` crosses k/N of the whole (a request goes to the part that
// holds its midpoint), so parts differ by at most about one request's weight.
std::vector<int> assign_parts(const std::vector<uint64_t>& weights, int count);

class ShardRecorder : public LM {
 public:
  // Answers only this shard's requests of each call with `inner`; the others get placeholders
  // (a shard run is not scored). Requests are weighed by inner's token_count, or by UTF-8 bytes
  // when it has no tokenizer (dummy).
  ShardRecorder(std::unique_ptr<LM> inner, ShardSpec spec);

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  Json model_info() const override { return inner_->model_info(); }
  std::optional<TokenizerInfo> tokenizer_info() const override { return inner_->tokenizer_info(); }
  std::vector<int> batch_sizes() const override { return inner_->batch_sizes(); }
  Json performance_stats() const override { return inner_->performance_stats(); }
  std::optional<size_t> token_count(const std::string& text) const override {
    return inner_->token_count(text);
  }
  std::optional<std::string> chat_template(const std::string& name) const override {
    return inner_->chat_template(name);
  }
  std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const override;
  Json chat_template_variables() const override { return inner_->chat_template_variables(); }

  // The partial file's model part: {"shard", "calls", "model"} (the evaluator adds "config").
  Json partial() const;

 private:
  template <class R, class Q, class Call>
  std::vector<R> run(const char* type, const std::vector<Q>& requests, Call call);
  uint64_t weight(const std::string& text) const;

  std::unique_ptr<LM> inner_;
  ShardSpec spec_;
  Json calls_ = Json::array();
  mutable Json chat_ = Json::object();  // sha256 of the messages -> rendered prompt
};

// The model of a merged run: answers every call from the parts' recorded answers (checking that
// the requests are the same ones) and reports the parts' model facts. Throws UserError when the
// parts do not fit together (other runs, a part missing or given twice).
std::unique_ptr<LM> make_replay_lm(const std::vector<Json>& parts,
                                   const std::vector<std::string>& names);

// Key of one message list for a chat rendering (shared by recorder and replay).
std::string chat_key(const std::vector<ChatMessage>& messages, bool add_generation_prompt);

}  // namespace lmeval

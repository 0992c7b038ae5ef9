// A model lent to a run by its owner, who keeps it for the next run (several adapters over one
// base share one model): every call goes to the owner's model, the run's progress and answer sink
// with it.
#pragma once

#include <string>
#include <vector>

#include "lmeval/models/lm.hpp"

namespace lmeval {

class BorrowedLM : public LM {
 public:
  explicit BorrowedLM(LM& inner) : inner_(inner) {}

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  Json model_info() const override { return inner_.model_info(); }
  std::optional<TokenizerInfo> tokenizer_info() const override { return inner_.tokenizer_info(); }
  std::vector<int> batch_sizes() const override { return inner_.batch_sizes(); }
  Json performance_stats() const override { return inner_.performance_stats(); }
  std::optional<size_t> token_count(const std::string& text) const override {
    return inner_.token_count(text);
  }
  std::optional<std::string> chat_template(const std::string& name) const override {
    return inner_.chat_template(name);
  }
  std::string chat_template_source() const override { return inner_.chat_template_source(); }
  std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const override {
    return inner_.apply_chat_template(messages, add_generation_prompt);
  }
  Json chat_template_variables() const override { return inner_.chat_template_variables(); }

 private:
  // Runs `call` on the owner's model with this run's progress and sink, then takes them back.
  template <class F>
  auto lent(F&& call);

  LM& inner_;
};

}  // namespace lmeval

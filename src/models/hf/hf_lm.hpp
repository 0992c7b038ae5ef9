// HFLM: the reference's Hugging Face causal LM wrapper (encoding, batching, rolling windows,
// generation) over the torch-free Transformer interface.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/models/gen_kwargs.hpp"
#include "lmeval/models/hf/hf_args.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/rolling_windows.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/hf/causal_model.hpp"
#include "models/hf/hf_encoding.hpp"
#include "models/hf/hf_lm_setup.hpp"
#include "models/hf/phase_stats.hpp"

namespace lmeval::hf {

// lm_eval.utils.get_rolling_token_windows(..., context_len=1) followed by make_disjoint_window
// (the models module's implementation, shared with the API backends).
inline std::vector<TokenPair> rolling_windows(const std::vector<Token>& tokens, Token prefix_token,
                                              int64_t max_length) {
  return rolling_token_windows(tokens, prefix_token, max_length);
}

class HFLM : public LM {
 public:
  explicit HFLM(const HfArgs& args);

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  Json model_info() const override;
  std::optional<TokenizerInfo> tokenizer_info() const override;
  std::vector<int> batch_sizes() const override { return batch_sizes_; }
  std::optional<std::string> chat_template(const std::string& name) const override;
  std::string chat_template_source() const override { return tokenizer_->chat_template_source(); }
  Json chat_template_variables() const override;
  Json performance_stats() const override;
  std::optional<size_t> token_count(const std::string& text) const override {
    return tokenizer_->encode(text, false).size();
  }
  // Several peft adapters over one base: the native model switches between them in place.
  bool prepare_adapters(const std::vector<std::string>& adapters) override;
  void use_adapter(size_t i) override;

  // HFLM.tok_encode (spec §6.4).
  std::vector<Token> tok_encode(const std::string& text,
                                std::optional<bool> add_special_tokens = {},
                                size_t left_truncate_len = 0) const;
  // TemplateLM.loglikelihood's encoding of one request: (context ids, continuation ids).
  TokenPair encode_request(const LoglikelihoodRequest& request) const;
  // Called with a request's index and result as soon as it is scored.
  using ScoredFn = std::function<void(size_t, const LoglikelihoodResult&)>;
  // HFLM._loglikelihood_tokens: sorted, grouped, batched scoring; results in request order.
  std::vector<LoglikelihoodResult> loglikelihood_tokens(const std::vector<TokenPair>& requests,
                                                        const char* phase = "loglikelihood",
                                                        const ScoredFn& scored = {});

  int64_t max_length() const { return max_length_; }
  Token prefix_token_id() const { return ids_.prefix; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The native Transformer (tests, the benchmark); only for a model that runs natively.
  Transformer& transformer() { return *model_->native(); }
  // Why the model runs through transformers; nullopt when it runs natively.
  const std::optional<std::string>& transformers_reason() const { return transformers_reason_; }
  // Rows per batch for tests (0 = automatic).
  void set_fixed_batch_rows(int64_t rows) {
    fixed_rows_ = rows;
    auto_batch_ = rows <= 0;
  }
  // Whether multiple-choice contexts are shared across continuations (on by default; off for
  // tests and benchmarks that compare both ways).
  void set_prefix_sharing(bool on) { prefix_sharing_ = on; }
  // Tokens fed and the largest batch (tokens) of a phase so far, for the benchmark.
  int64_t fed_tokens(const std::string& phase_name) { return phase(phase_name).fed_tokens; }
  int64_t max_batch_tokens(const std::string& phase_name) {
    return phase(phase_name).max_batch_tokens;
  }

 private:
  using Phase = PhaseStats;
  int64_t token_budget(int64_t length);
  void report(size_t done, size_t total, int64_t tokens);
  Phase& phase(const std::string& name) { return phases_.get(name); }

  // generate_until's pieces: one gen_kwargs group at a time, sorted, batched and decoded.
  struct GenerationProgress {
    size_t done = 0;
    int64_t tokens = 0;
    size_t total = 0;
  };
  void generate_group(const std::vector<GenerationRequest>& requests,
                      const std::vector<size_t>& members, const gen_kwargs::HfGenKwargs& g,
                      const Json& kw, std::vector<std::string>& out, GenerationProgress& progress);
  // The members in the reference's order (longest encoded context first), with their lengths.
  std::vector<size_t> by_context_length(const std::vector<GenerationRequest>& requests,
                                        const std::vector<size_t>& members,
                                        std::vector<int64_t>& lengths) const;
  std::optional<bool> batch_special_tokens(const std::string& first_context) const;

  HfArgs args_;
  // prepare_adapters' adapters (as given, and their folders) and the one the model runs with.
  std::vector<std::pair<std::string, std::filesystem::path>> adapters_;
  size_t active_adapter_ = 0;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<CausalModel> model_;
  std::optional<std::string> transformers_reason_;
  std::string execution_line() const;
  int64_t max_length_ = 2048;
  HfTokenIds ids_;
  int64_t fixed_rows_ = 0;  // from batch_size N
  bool auto_batch_ = true;
  int64_t auto_schedule_ = 1;  // N of batch_size auto:N
  bool prefix_sharing_ = true;
  int64_t detected_rows_ = 0;  // CUDA probe result
  double oom_shrink_ = 1.0;    // budget factor after an out-of-memory retry
  std::vector<int> batch_sizes_;
  PhaseTable phases_;
  bool warned_truncation_ = false;
};

}  // namespace lmeval::hf

// HFLM's seq2seq backend (backend=seq2seq, or a config.json whose model_type transformers maps
// to AutoModelForSeq2SeqLM): the encoder reads the context, the decoder is scored on or
// generates the continuation (reference: lm_eval/models/huggingface.py, the `self.backend ==
// "seq2seq"` branches).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/models/hf/hf_args.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/hf/encoder_decoder.hpp"
#include "models/hf/hf_encoding.hpp"
#include "models/hf/hf_lm.hpp"
#include "models/hf/hf_lm_setup.hpp"
#include "models/hf/phase_stats.hpp"

namespace lmeval::hf {

// HFLM._get_backend: backend=seq2seq, or backend=default and config.json's model_type is one
// transformers maps to a seq2seq LM. `dir` is the model folder (config.json).
bool uses_seq2seq_backend(const HfArgs& args, const std::filesystem::path& dir);
// The seq2seq backend when uses_seq2seq_backend, else null (make_hf_model's dispatch; the
// transformers plugin, which has no native encoder-decoder, always answers null).
std::unique_ptr<LM> make_seq2seq_model(const HfArgs& args, const std::filesystem::path& dir);

class Seq2SeqLM : public LM {
 public:
  Seq2SeqLM(const HfArgs& args, const std::filesystem::path& dir);

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  Json model_info() const override;
  std::optional<TokenizerInfo> tokenizer_info() const override;
  std::vector<int> batch_sizes() const override { return {}; }
  std::optional<std::string> chat_template(const std::string& name) const override;
  std::string chat_template_source() const override { return tokenizer_->chat_template_source(); }
  Json chat_template_variables() const override;
  Json performance_stats() const override;
  std::optional<size_t> token_count(const std::string& text) const override {
    return tokenizer_->encode(text, false).size();
  }

  // HFLM.tok_encode.
  std::vector<Token> tok_encode(const std::string& text,
                                std::optional<bool> add_special_tokens = {}) const;
  // TemplateLM.loglikelihood / _encode_pair for seq2seq: context and continuation encoded apart,
  // the continuation without special tokens.
  TokenPair encode_request(const LoglikelihoodRequest& request) const;
  // HFLM._loglikelihood_tokens for seq2seq; results in request order.
  std::vector<LoglikelihoodResult> loglikelihood_tokens(const std::vector<TokenPair>& requests,
                                                        const char* phase);

  int64_t max_length() const { return max_length_; }
  Token prefix_token_id() const { return ids_.prefix; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  EncoderDecoder& model() { return *model_; }
  void set_fixed_batch_rows(int64_t rows) { fixed_rows_ = rows; }

 private:
  using Phase = PhaseStats;
  Phase& phase(const std::string& name) { return phases_.get(name); }
  void generate_batch(const std::vector<GenerationRequest>& requests,
                      const std::vector<size_t>& rows, const gen_kwargs::HfGenKwargs& g,
                      const Json& kw, std::vector<std::string>& out, int64_t& tokens);
  int64_t generation_rows() const;

  HfArgs args_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<EncoderDecoder> model_;
  int64_t max_length_ = 2048;
  HfTokenIds ids_;
  int64_t fixed_rows_ = 0;  // batch_size N; 0 = automatic
  PhaseTable phases_;
};

}  // namespace lmeval::hf

// The encoder-decoder model of the hf backend (T5, T5 v1.1, Flan-T5), behind a torch-free
// interface (pimpl): the encoder reads the context, the decoder is scored on or generates the
// continuation while attending to the encoder's output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "models/hf/arch/encoder_decoder_config.hpp"
#include "models/hf/transformer.hpp"

namespace lmeval::hf {

// One scored request: the encoder's input and the decoder's targets (the decoder is fed the
// start token followed by all targets but the last, as T5's _shift_right makes of the labels).
struct Seq2SeqRow {
  std::vector<Token> encoder;
  std::vector<Token> targets;
};

class EncoderDecoder {
 public:
  static std::unique_ptr<EncoderDecoder> load(const std::filesystem::path& model_dir,
                                              const LoadOptions& options);
  ~EncoderDecoder();

  const EncoderDecoderConfig& config() const;
  int64_t num_parameters() const;
  std::string dtype_name() const;  // "torch.float32", ...
  bool on_cuda() const;

  // One forward pass over the rows (encoder inputs and targets right-padded with 0 and the
  // encoder's padding masked, as HFLM._loglikelihood_tokens batches them): the summed log-prob
  // of each row's targets and whether each target is the argmax. Throws OutOfMemory.
  std::vector<SpanScore> score(const std::vector<Seq2SeqRow>& rows);

  // Full log-softmax rows of the decoder (float32, [B][T][V] flattened) for tests and tools:
  // encoder ids and mask [B][S] (mask 1 = real token), decoder inputs [B][T] (start token first).
  std::vector<float> full_logprobs(const std::vector<std::vector<Token>>& encoder_ids,
                                   const std::vector<std::vector<int64_t>>& encoder_mask,
                                   const std::vector<std::vector<Token>>& decoder_ids);

  // Generation from left-padded encoder inputs, the decoder starting from the start token, its
  // self-attention keys and values cached and the cross-attention's computed once. Returns the
  // new tokens of each row (an EOS that ended a row included).
  std::vector<std::vector<Token>> generate(const std::vector<std::vector<Token>>& prompts,
                                           const SamplingOptions& options, const StopFn& stop);

  // The LM head becomes the shared embedding (a separate lm_head.weight is dropped).
  void tie_word_embeddings();

  struct Impl;

 private:
  explicit EncoderDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmeval::hf

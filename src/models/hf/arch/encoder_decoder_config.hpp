// The description of an encoder-decoder model (T5 and its v1.1 / Flan-T5 variants) as the
// encoder-decoder blocks run it (encoder_decoder.hpp), the architectures that have one, and how
// HFLM picks its seq2seq backend from config.json. Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "models/hf/arch/arch_config.hpp"
#include "models/hf/arch/config_reader.hpp"

namespace lmeval::hf {

struct EncoderDecoderConfig {
  std::string architecture;  // e.g. "T5ForConditionalGeneration"
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t d_model = 0;
  int64_t d_kv = 0;  // per-head width; heads * d_kv need not be d_model
  int64_t d_ff = 0;
  int64_t num_heads = 0;
  int64_t encoder_layers = 0;
  int64_t decoder_layers = 0;
  // Relative position buckets (T5Attention._relative_position_bucket): half of them exact
  // offsets, the rest logarithmic up to max_distance; bidirectional in the encoder.
  int64_t relative_buckets = 32;
  int64_t relative_max_distance = 128;
  double norm_eps = 1e-6;  // T5LayerNorm: RMS without mean subtraction or bias
  Activation activation = Activation::kRelu;
  bool gated_mlp = false;  // feed_forward_proj "gated-ACT" (v1.1, Flan-T5)
  // The decoder output times d_model**-0.5 before the LM head (T5 v1.0: tied embeddings).
  bool scale_decoder_outputs = true;
  std::optional<int64_t> max_position_embeddings;  // n_positions / max_position_embeddings / n_ctx
  int64_t decoder_start_token_id = 0;
  std::string torch_dtype;
  std::optional<int64_t> bos_token_id, eos_token_id, pad_token_id;
};

class EncoderDecoderWeights;  // encoder_decoder_impl.hpp (libtorch)

// An encoder-decoder architecture: config.json to the description, and its weight names.
struct EncoderDecoderSpec {
  const char* architecture;  // config.json's architectures[0]
  const char* model_type;
  void (*parse)(const ConfigReader& c, EncoderDecoderConfig& a);
  void (*load)(EncoderDecoderWeights& w);
};

const std::vector<const EncoderDecoderSpec*>& encoder_decoder_registry();

// True when HFLM._get_backend picks "seq2seq" for this model_type (it is a key of transformers'
// MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES, checked before the causal mapping).
bool is_seq2seq_model_type(const std::string& model_type);

// Parses config.json (path for messages); throws UserError for an encoder-decoder architecture
// without a native implementation or a missing/invalid field.
EncoderDecoderConfig parse_encoder_decoder_config(const Json& config, const std::string& path);

}  // namespace lmeval::hf

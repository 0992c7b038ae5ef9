// The encoder-decoder architectures and the seq2seq model types of transformers' Auto mapping.
#include <algorithm>
#include <array>
#include <string_view>

#include "lmeval/core/error.hpp"
#include "models/hf/arch/encoder_decoder_config.hpp"

namespace lmeval::hf {

extern const EncoderDecoderSpec kT5;

const std::vector<const EncoderDecoderSpec*>& encoder_decoder_registry() {
  static const std::vector<const EncoderDecoderSpec*> specs = {&kT5};
  return specs;
}

bool is_seq2seq_model_type(const std::string& model_type) {
  // transformers 5.23's MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES keys.
  static constexpr std::array<std::string_view, 37> kSeq2Seq = {"audioflamingo3",
                                                                "bart",
                                                                "bigbird_pegasus",
                                                                "blenderbot",
                                                                "blenderbot-small",
                                                                "encoder-decoder",
                                                                "fsmt",
                                                                "glmasr",
                                                                "granite_speech",
                                                                "granite_speech_plus",
                                                                "led",
                                                                "longt5",
                                                                "m2m_100",
                                                                "marian",
                                                                "mbart",
                                                                "moss_transcribe_diarize",
                                                                "mt5",
                                                                "musicflamingo",
                                                                "mvp",
                                                                "nemo_speechlm",
                                                                "nllb-moe",
                                                                "pegasus",
                                                                "pegasus_x",
                                                                "plbart",
                                                                "prophetnet",
                                                                "qwen2_audio",
                                                                "qwen3_asr",
                                                                "seamless_m4t",
                                                                "seamless_m4t_v2",
                                                                "switch_transformers",
                                                                "t5",
                                                                "t5gemma",
                                                                "t5gemma2",
                                                                "umt5",
                                                                "vibevoice_asr",
                                                                "voxtral",
                                                                "voxtral_realtime"};
  return std::find(kSeq2Seq.begin(), kSeq2Seq.end(), model_type) != kSeq2Seq.end();
}

EncoderDecoderConfig parse_encoder_decoder_config(const Json& j, const std::string& path) {
  if (!j.is_object())
    throw UserError("config.json is not an object", {path, 0, 0, ""}, "a JSON object");
  ConfigReader c(j, path);
  EncoderDecoderConfig a;
  std::string arch;
  if (c.has("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    arch = j["architectures"][0].get<std::string>();
  a.model_type = c.str_or("model_type", "");
  const EncoderDecoderSpec* spec = nullptr;
  for (const EncoderDecoderSpec* s : encoder_decoder_registry())
    // AutoModelForSeq2SeqLM builds the model of model_type; architectures decides without one.
    if (a.model_type.empty() ? arch == s->architecture : a.model_type == s->model_type) spec = s;
  if (!spec) {
    std::string list;
    for (const EncoderDecoderSpec* s : encoder_decoder_registry())
      list += (list.empty() ? "" : ", ") + std::string(s->architecture) + " (model_type " +
              s->model_type + ")";
    const std::string what =
        a.model_type.empty() ? "architecture '" + arch + "'" : "model_type '" + a.model_type + "'";
    throw UserError(what +
                        " has no native encoder-decoder (backend=seq2seq) implementation in "
                        "lm-eval's hf backend; to run it anyway, serve it with an "
                        "OpenAI-compatible server and use --model local-completions "
                        "(docs/models.md)",
                    {path, 0, 0, a.model_type.empty() ? "$.architectures" : "$.model_type"},
                    "one of " + list);
  }
  a.architecture = arch.empty() ? spec->architecture : arch;
  a.vocab_size = c.size_("vocab_size");
  const std::string dtype_key = c.has("dtype") ? "dtype" : "torch_dtype";
  a.torch_dtype = c.str_or(dtype_key, "");
  a.bos_token_id = c.opt_int("bos_token_id");
  a.eos_token_id = c.opt_int("eos_token_id");
  a.pad_token_id = c.opt_int("pad_token_id");
  for (const char* k : {"n_positions", "max_position_embeddings", "n_ctx"})
    if (!a.max_position_embeddings) a.max_position_embeddings = c.opt_size(k);
  spec->parse(c, a);
  return a;
}

}  // namespace lmeval::hf

// The hf backend's model_args: the HfArgs struct and its table (models/model_arg_table.hpp).
// Torch-free: lm-eval itself reads the table (`ls models`, `validate`, docs) and the plugin calls
// parse_hf_args from the executable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_table.hpp"

namespace lmeval::hf {

// model_args after coercion (spec §6.1), with the CLI's ModelOptions applied.
struct HfArgs {
  std::string pretrained;
  std::string backend = "default";  // default | causal | seq2seq (HFLM._get_backend)
  std::string tokenizer;            // empty = pretrained
  std::string revision = "main";
  std::string subfolder;  // inside pretrained (and tokenizer), as HFLM passes it to both
  std::string peft;       // LoRA adapter folder or Hub id
  std::string delta;      // delta weights folder or Hub id
  std::string gguf_file;  // a GGUF file inside pretrained (HFLM's gguf_file)
  std::string dtype = "auto";
  std::string softmax_dtype;
  std::string device;  // empty = cuda when available, else cpu
  std::optional<int64_t> max_length;
  std::optional<bool> add_bos_token;
  std::optional<int64_t> prefix_token_id;
  std::string batch_size;  // "" (unset) | "N" | "auto" | "auto:N"
  int64_t max_batch_size = 64;
  bool logits_cache = true;
  std::optional<std::string> think_end_token;
  int threads = 0;
  std::optional<int64_t> seed;
  // Read by transformers only (models/hf/transformers_path.cpp decides when a model runs there):
  bool trust_remote_code = false;  // the model folder's own code (config.json's auto_map)
  bool use_fast_tokenizer = true;
  bool parallelize = false;  // device_map="auto" over the GPUs (HFLM._get_accelerate_args)
  // The other keys HFLM hands to from_pretrained or to its accelerate arguments, as given
  // (load_in_4bit, attn_implementation, device_map, max_memory_per_gpu, offload_folder, ...).
  Json transformers_kwargs = Json::object();
};

// The keys of transformers_kwargs that matter only with parallelize=True (the reference's
// _get_accelerate_args reads them there and drops them otherwise).
bool only_with_parallelize(const std::string& key);

// Every model_args key of `hf`, in the order the unknown-key error lists them.
const ModelArgTable<HfArgs>& hf_model_args();

// Parses model_args (values may be strings, numbers or booleans); unknown keys are a UserError
// listing the known ones.
HfArgs parse_hf_args(const Json& model_args, const ModelOptions& options);

}  // namespace lmeval::hf

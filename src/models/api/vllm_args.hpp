// --model vllm's model_args (the reference's VLLM.__init__ keys) and their mapping to the options
// of vLLM's OpenAI-compatible server, as VLLM maps them to vllm.LLM(**model_args).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/engine_args.hpp"

namespace lmeval::api {

// tokenizer empty: pretrained; max_length: max_length or max_model_len.
struct VllmArgs : EngineArgs {
  std::optional<std::string> tokenizer_revision, revision;
  std::optional<bool> add_bos_token;
  int64_t data_parallel_size = 1;
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;  // passed through; counts GPUs per replica
  std::optional<std::string> lora_local_path;
  std::string truncation_side = "left";
};

// The keys the table describes (docs/models.md, `ls models`); other keys pass through to vLLM.
const std::vector<ModelArgInfo>& vllm_arg_infos();

// Reads model_args as VLLM.__init__ does. UserError (exit 2) naming the key for a bad value.
// `notes`: log VLLM.__init__'s warnings (off for the early check, which precedes the real read).
VllmArgs parse_vllm_args(const Json& model_args, const ModelOptions& options, bool notes = true);

}  // namespace lmeval::api

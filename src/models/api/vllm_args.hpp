// --model vllm's model_args (the reference's VLLM.__init__ keys) and their mapping to the options
// of vLLM's OpenAI-compatible server, as VLLM maps them to vllm.LLM(**model_args).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"

namespace lmeval::api {

struct VllmArgs {
  std::string pretrained;
  std::string tokenizer;  // empty: pretrained
  std::optional<std::string> tokenizer_revision, revision;
  std::optional<bool> add_bos_token;
  std::optional<int64_t> prefix_token_id;
  int64_t max_gen_toks = 256;
  std::optional<int64_t> max_length;  // max_length or max_model_len
  int64_t data_parallel_size = 1;
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;  // passed through; counts GPUs per replica
  std::optional<std::string> lora_local_path;
  std::optional<std::string> think_end_token;
  std::string truncation_side = "left";
  // lm-eval's own: requests in flight per server, seconds to wait for a server to be ready.
  int64_t num_concurrent = 256;
  double server_timeout_s = 1800;
  // Credentials among the pass-through keys (api_key, token, ...): passed on, never printed;
  // api_key also authorises lm-eval's requests (vLLM's --api-key).
  std::vector<std::string> secrets;
  std::optional<std::string> api_key;
  // The server's command line after `--model M --host 127.0.0.1 --port P`.
  std::vector<std::string> server_options;
};

// The keys the table describes (docs/models.md, `ls models`); other keys pass through to vLLM.
const std::vector<ModelArgInfo>& vllm_arg_infos();

// Reads model_args as VLLM.__init__ does. UserError (exit 2) naming the key for a bad value.
// `notes`: log VLLM.__init__'s warnings (off for the early check, which precedes the real read).
VllmArgs parse_vllm_args(const Json& model_args, const ModelOptions& options, bool notes = true);

// A vllm.LLM keyword as the server's option: `--snake-case-as-dashes VALUE`; True as the bare
// flag, False as `--no-flag`, objects and lists as JSON text, None omitted.
void append_server_option(std::vector<std::string>& out, const std::string& key, const Json& v);

}  // namespace lmeval::api

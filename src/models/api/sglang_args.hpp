// --model sglang's model_args (the reference's SGLangLM.__init__ keys) and their mapping to the
// options of `python -m sglang.launch_server`, as SGLangLM maps them to sglang.Engine(**kwargs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"

namespace lmeval::api {

struct SglangArgs {
  std::string pretrained;
  std::string tokenizer;              // tokenizer_path, else pretrained
  std::optional<int64_t> max_length;  // max_model_len or context_length
  int64_t max_gen_toks = 256;
  bool add_bos_token = false;  // True for a pretrained whose name holds "gemma"
  std::optional<int64_t> prefix_token_id;
  std::optional<std::string> think_end_token;
  // lm-eval's own: requests in flight, seconds to wait for the server to be ready.
  int64_t num_concurrent = 256;
  double server_timeout_s = 1800;
  // Credentials among the pass-through keys: passed on, never printed; api_key also authorises
  // lm-eval's requests (SGLang's --api-key).
  std::vector<std::string> secrets;
  std::optional<std::string> api_key;
  // The server's command line after `--model-path M --host 127.0.0.1 --port P`.
  std::vector<std::string> server_options;
};

// The keys the table describes (docs/models.md, `ls models`); other keys pass through to SGLang.
const std::vector<ModelArgInfo>& sglang_arg_infos();

// Reads model_args as SGLangLM.__init__ does. UserError (exit 2) naming the key for a bad value.
// `notes`: log SGLangLM.__init__'s messages (off for the early check, before the real read).
SglangArgs parse_sglang_args(const Json& model_args, const ModelOptions& options,
                             bool notes = true);

}  // namespace lmeval::api

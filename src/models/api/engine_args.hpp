// What --model vllm's and --model sglang's model_args share: the fields both backends read, the
// rows both tables show, the mapping of a keyword to a server option, the pass-through of every
// other key, and the server's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/managed_server.hpp"

namespace lmeval::api {

struct EngineArgs {
  std::string pretrained;
  std::string tokenizer;
  std::optional<int64_t> max_length;
  int64_t max_gen_toks = 256;
  std::optional<int64_t> prefix_token_id;
  std::optional<std::string> think_end_token;
  // lm-eval's own: requests in flight per server, seconds to wait for a server to be ready.
  int64_t num_concurrent = 256;
  double server_timeout_s = 1800;
  // Credentials among the pass-through keys (api_key, token, ...): passed on, never printed;
  // api_key also authorises lm-eval's requests (the server's --api-key).
  std::vector<std::string> secrets;
  std::optional<std::string> api_key;
  // The server's command line after its model and `--host 127.0.0.1 --port P`.
  std::vector<std::string> server_options;
};

// The row of a key both tables describe alike (max_gen_toks, prefix_token_id, think_end_token,
// num_concurrent, server_timeout).
const ModelArgInfo& engine_arg_info(const std::string& key);

// Reads the keys of engine_arg_info into `a`. UserError (exit 2) naming the key for a bad value.
void parse_engine_args(const Json& model_args, EngineArgs& a);

// How a server takes a False keyword: vLLM's options have `--no-flag`; SGLang's boolean options
// are store_true flags with a False default, so False is left out.
enum class FalseFlag { kNoPrefix, kOmitted };

// A keyword as the server's option: `--snake-case-as-dashes VALUE`; True as the bare flag, False
// as `false_flag` says, objects and lists as JSON text, None omitted.
void append_server_option(std::vector<std::string>& out, const std::string& key, const Json& v,
                          FalseFlag false_flag);

// Every key of `model_args` not in `taken` passed to the server as it is (the engine's own error
// shows a bad one), credentials among them kept in a.secrets (api_key also as a.api_key).
void pass_other_args(const Json& model_args, const std::vector<std::string>& taken,
                     FalseFlag false_flag, EngineArgs& a);

// `python -m <module> <model_flag> PRETRAINED --host 127.0.0.1 --port P <server_options>`, ready
// when GET /v1/models answers (the servers listen once the model is loaded) within
// server_timeout; `what` names it in messages.
ServerCommand engine_server_command(std::string what, const std::string& python,
                                    const std::string& module, const std::string& model_flag,
                                    const EngineArgs& a, int port);

}  // namespace lmeval::api

// --model sglang's model_args (the reference's SGLangLM.__init__ keys) and their mapping to the
// options of `python -m sglang.launch_server`, as SGLangLM maps them to sglang.Engine(**kwargs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/engine_args.hpp"

namespace lmeval::api {

// tokenizer: tokenizer_path, else pretrained; max_length: max_model_len or context_length.
struct SglangArgs : EngineArgs {
  bool add_bos_token = false;  // True for a pretrained whose name holds "gemma"
};

// The keys the table describes (docs/models.md, `ls models`); other keys pass through to SGLang.
const std::vector<ModelArgInfo>& sglang_arg_infos();

// Reads model_args as SGLangLM.__init__ does. UserError (exit 2) naming the key for a bad value.
// `notes`: log SGLangLM.__init__'s messages (off for the early check, before the real read).
SglangArgs parse_sglang_args(const Json& model_args, const ModelOptions& options,
                             bool notes = true);

}  // namespace lmeval::api

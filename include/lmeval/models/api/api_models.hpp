// Registration of the OpenAI-compatible API models (local-completions, local-chat-completions,
// openai-completions, openai-chat-completions).
#pragma once

#include "lmeval/models/lm.hpp"

namespace lmeval {

void register_api_models(ModelRegistry& registry);

}  // namespace lmeval

// The JSON of Anthropic Messages API requests and the reading of their answers, as the
// reference's AnthropicChat (lm_eval/models/anthropic_llms.py) builds and parses them.
#pragma once

#include <optional>
#include <string>

#include "lmeval/core/json.hpp"

namespace lmeval::api {

// The version header AnthropicChat sends (anthropic-version).
inline constexpr const char* kAnthropicVersion = "2023-06-01";

// AnthropicChat._create_payload(messages, generate=True, gen_kwargs, eos): a leading system
// message becomes `system`, every other message's content a one-item text block list;
// do_sample dropped, max_gen_toks (else `default_max_gen_toks`) as max_tokens, temperature
// (else 0), until (else ["\n\nHuman:"]) through handle_stop_sequences with `eos`, empty and
// whitespace-only stops dropped ([eos] when none is left, null when eos is unset, as the
// reference sends it), the other gen_kwargs as given.
Json anthropic_messages_payload(const Json& model, const Json& messages, const Json& gen_kwargs,
                                int64_t default_max_gen_toks,
                                const std::optional<std::string>& eos);

// AnthropicChat.parse_generations for one answer: the text of its first content block with a
// text (the reference takes content[0]["text"]). Throws MalformedResponse when there is none.
std::string parse_anthropic_message(const Json& answer);

}  // namespace lmeval::api

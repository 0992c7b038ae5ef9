// The JSON of Anthropic API requests and the reading of their answers, as the reference
// builds and parses them (lm_eval/models/anthropic_llms.py): the Messages API's (AnthropicChat)
// and the legacy Text Completions API's (AnthropicLM over the anthropic SDK's
// client.completions).
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

// The anthropic SDK's HUMAN_PROMPT and AI_PROMPT (anthropic 0.38.0).
inline constexpr const char* kHumanPrompt = "\n\nHuman:";
inline constexpr const char* kAiPrompt = "\n\nAssistant:";

// The body of anthropic_completion(client, model, prompt, max_tokens_to_sample, temperature,
// stop, **kwargs) as client.completions.create sends it: the prompt as
// f"{HUMAN_PROMPT} {prompt}{AI_PROMPT}", stop_sequences [HUMAN_PROMPT] + stop, and `extra`
// (AnthropicLM's other model_args: metadata, top_k, top_p) in create()'s order. `stop` must be
// a list (the reference's list + None or list + str is a TypeError).
Json anthropic_completion_payload(const std::string& model, const std::string& prompt,
                                  const Json& max_tokens_to_sample, const Json& temperature,
                                  const Json& stop, const Json& extra);

// Completion.completion of one answer. The SDK builds its models without validation, so the
// reference gets None for an answer without it; lm-eval throws MalformedResponse.
std::string parse_anthropic_completion(const Json& answer);

}  // namespace lmeval::api

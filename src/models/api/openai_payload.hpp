// The JSON of OpenAI-style completions and chat requests, and the reading of their answers, as
// the reference's LocalCompletionsAPI / LocalChatCompletion / OpenAIChatCompletion build them.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lmeval/models/lm.hpp"

namespace lmeval::api {

// An answer that parsed as HTTP but not as what the request asked for (bad JSON, no logprobs,
// wrong number of choices). Retried like a server error; reported after the retries.
class MalformedResponse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Endpoint { kCompletions, kChat };

struct PayloadStyle {
  Endpoint endpoint = Endpoint::kCompletions;
  // OpenAIChatCompletion: max_completion_tokens instead of max_tokens, `until` defaulting to
  // ["<|endoftext|>"], and no stop / temperature 1 for reasoning models (o1, o3, o4, *5*).
  bool openai_chat = false;
  // AnthropicChat: the Messages API's bodies and answers (anthropic_payload.hpp).
  bool anthropic = false;
};

// LocalCompletionsAPI._create_payload(generate=False): echo the prompt with its logprobs.
Json loglikelihood_payload(const Json& model, const Json& prompt, int64_t seed);

// _create_payload(generate=True). `prompt` is the prompt (completions: a string, a list of
// strings or a list of token lists) or the message list (chat). gen_kwargs is the request's
// generation kwargs (copied; do_sample, max_tokens / max_gen_toks, temperature, until are taken
// out as gen_kwargs::pop_for_payload says, the rest is sent as given).
Json generation_payload(const PayloadStyle& style, const Json& model, const Json& prompt,
                        const Json& gen_kwargs, int64_t default_max_gen_toks, int64_t seed,
                        const std::optional<std::string>& eos);

// LocalCompletionsAPI.parse_logprobs for one answer: choice i (by "index") scores
// token_logprobs[ctxlens[i]:-1]; is_greedy when each of those equals the best of its
// top_logprobs. Throws MalformedResponse when the answer lacks what is needed. With `prompt_lens`
// (the tokens sent per prompt), token_logprobs shorter than the echoed prompt plus the generated
// token is malformed too: the reference sums an empty or short slice, a log-likelihood of 0.0 or
// a part of one, without a word. `exact` says the prompts went as token ids (else the server
// tokenized text, and only a slice missing the whole continuation is certainly wrong).
std::vector<LoglikelihoodResult> parse_logprobs(const Json& response,
                                                const std::vector<int64_t>& ctxlens,
                                                const std::vector<int64_t>& prompt_lens = {},
                                                bool exact = true);

// parse_generations for one answer with `expected` choices: completions "text", chat
// "message.content" (after think_end_token when given). A null text stays nullopt.
std::vector<std::optional<std::string>> parse_generations(
    Endpoint endpoint, const Json& response, size_t expected,
    const std::optional<std::string>& think_end_token);

// Parses a response body, throwing MalformedResponse with a short excerpt when it is not JSON.
Json parse_body(const std::string& body);

}  // namespace lmeval::api

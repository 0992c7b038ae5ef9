// A generate_until request's gen_kwargs as the backends read them. The reference normalises them
// in two ways, and so does lm-eval, side by side here: HFLM through
// lm_eval.models.utils.normalize_gen_kwargs (max-token aliases, do_sample/temperature rules) and
// the API models through each payload builder's pops (openai_completions.py's _create_payload).
// Both end in handle_stop_sequences (`until` as a list, the EOS string appended).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::gen_kwargs {

// How a backend meets an `until` that is not a string or a list of strings.
enum class UntilRule {
  // HFLM: normalize_gen_kwargs wraps whatever is not a list and leaves the items to the stopping
  // criteria. lm-eval reads a non-string item as its JSON text and refuses any other `until`
  // than a string, a list or null with a UserError (exit 2).
  kHf,
  // TemplateAPI: handle_stop_sequences' ValueError (its message) for anything but a string, a
  // list or null, and a list item that is not a string is refused too (RuntimeError, exit 1).
  kApi,
};

// lm_eval.models.utils.handle_stop_sequences: `until` (a string, a list, or null/absent: none)
// as a list of stop strings, with `eos` appended when given and not already there.
std::vector<std::string> stop_sequences(const Json& until, const std::optional<std::string>& eos,
                                        UntilRule rule);

// normalize_gen_kwargs' max-token aliases, in its priority order; the first one given and not
// None wins.
inline constexpr const char* kMaxTokenAliases[] = {"max_gen_toks", "max_new_tokens", "max_tokens",
                                                   "max_completion_tokens"};

// HFLM.generate_until's reading: normalize_gen_kwargs(gen_kwargs, self.max_gen_toks), then
// handle_stop_sequences(kwargs.pop("until"), eos), then _model_generate's do_sample rule.
struct HfGenKwargs {
  std::vector<std::string> until;  // the stop strings, eos included
  int64_t max_gen_toks = 256;
  // Python's float(temperature) when it is a number, else 0.0.
  double temperature = 0.0;
  // do_sample as given; when absent or None, temperature > 0 (normalize_gen_kwargs).
  bool do_sample = false;
};
// `eos` empty: none. A max-token value that is not an integer is a UserError naming its key.
HfGenKwargs normalize_for_hf(const Json& gen_kwargs, int64_t default_max_gen_toks,
                             const std::string& eos);

// What an OpenAI-style payload builder takes out of gen_kwargs (LocalCompletionsAPI /
// LocalChatCompletion / OpenAIChatCompletion._create_payload): do_sample is dropped; max_tokens,
// else max_gen_toks, else the model's default (the value as given, None included: there is no
// alias chain here); temperature as given, else 0; until through handle_stop_sequences; the
// rest is sent as given.
struct PayloadGenKwargs {
  Json max_tokens;
  Json temperature;
  std::vector<std::string> stop;
  Json rest;  // the remaining keys, in their order
};
// `default_until`: what until is when absent (null; OpenAIChatCompletion: ["<|endoftext|>"]).
PayloadGenKwargs pop_for_payload(const Json& gen_kwargs, int64_t default_max_gen_toks,
                                 const Json& default_until, const std::optional<std::string>& eos);

// TemplateAPI.generate_until's context budget: gen_kwargs.get("max_gen_toks",
// self._max_gen_toks) (only that key; the default when it is not a number).
int64_t api_context_max_gen_toks(const Json& gen_kwargs, int64_t default_max_gen_toks);

}  // namespace lmeval::gen_kwargs

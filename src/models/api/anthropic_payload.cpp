// Anthropic API bodies and answers (anthropic_payload.hpp).
#include "models/api/anthropic_payload.hpp"

#include "lmeval/core/unicode.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

Json anthropic_messages_payload(const Json& model, const Json& messages, const Json& gen_kwargs,
                                int64_t default_max_gen_toks,
                                const std::optional<std::string>& eos) {
  Json system;
  size_t first = 0;
  if (messages.is_array() && !messages.empty() && messages[0].is_object() &&
      messages[0].value("role", Json()) == "system") {
    system = messages[0].value("content", Json());
    // `if system:` a falsy system message stays in the list.
    const bool truthy =
        !(system.is_null() || (system.is_string() && system.get<std::string>().empty()));
    if (truthy)
      first = 1;
    else
      system = Json();
  }
  Json cleaned = Json::array();
  for (size_t i = first; messages.is_array() && i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string type = m.value("type", std::string("text"));
    cleaned.push_back(
        {{"role", m.value("role", Json())},
         {"content", Json::array({Json{{"type", type}, {type, m.value("content", Json())}}})}});
  }
  Json kw = gen_kwargs.is_object() ? gen_kwargs : Json::object();
  kw.erase("do_sample");
  Json max_tokens = default_max_gen_toks;
  if (kw.contains("max_gen_toks")) {
    max_tokens = kw["max_gen_toks"];
    kw.erase("max_gen_toks");
  }
  Json temperature = 0;
  if (kw.contains("temperature")) {
    temperature = kw["temperature"];
    kw.erase("temperature");
  }
  Json until = Json::array({"\n\nHuman:"});
  if (kw.contains("until")) {
    until = kw["until"];
    kw.erase("until");
  }
  Json stop = Json::array();
  for (const auto& s : gen_kwargs::stop_sequences(until, eos, gen_kwargs::UntilRule::kApi))
    if (!unicode::py_strip(s).empty()) stop.push_back(s);
  if (stop.empty()) stop.push_back(eos ? Json(*eos) : Json());  // [eos]: [None] when unset
  Json out = {{"messages", cleaned},
              {"model", model},
              {"max_tokens", max_tokens},
              {"temperature", temperature},
              {"stop_sequences", stop}};
  for (auto it = kw.begin(); it != kw.end(); ++it) out[it.key()] = it.value();
  if (!system.is_null()) out["system"] = system;
  return out;
}

std::string parse_anthropic_message(const Json& answer) {
  if (!answer.is_object() || !answer.contains("content") || !answer["content"].is_array())
    throw MalformedResponse("the answer has no content list");
  for (const auto& block : answer["content"])
    if (block.is_object() && block.contains("text") && block["text"].is_string())
      return block["text"].get<std::string>();
  throw MalformedResponse("the answer's content has no text block");
}

Json anthropic_completion_payload(const std::string& model, const std::string& prompt,
                                  const Json& max_tokens_to_sample, const Json& temperature,
                                  const Json& stop, const Json& extra) {
  Json stops = Json::array({kHumanPrompt});
  for (const auto& s : stop) stops.push_back(s);
  Json out = {{"max_tokens_to_sample", max_tokens_to_sample},
              {"model", model},
              {"prompt", std::string(kHumanPrompt) + " " + prompt + kAiPrompt}};
  if (extra.contains("metadata")) out["metadata"] = extra["metadata"];
  out["stop_sequences"] = stops;
  out["temperature"] = temperature;
  for (const char* k : {"top_k", "top_p"})
    if (extra.contains(k)) out[k] = extra[k];
  return out;
}

std::string parse_anthropic_completion(const Json& answer) {
  if (!answer.is_object() || !answer.contains("completion") || !answer["completion"].is_string())
    throw MalformedResponse("the answer has no `completion` text");
  return answer["completion"].get<std::string>();
}

}  // namespace lmeval::api

// Request payloads and answer parsing of the reference's openai_completions.py.
#include "models/api/openai_payload.hpp"

#include <algorithm>
#include <limits>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/models/gen_kwargs.hpp"

namespace lmeval::api {

namespace {

std::string excerpt(const std::string& s) { return s.size() > 200 ? s.substr(0, 200) + "..." : s; }

// Python's xs[start:-1] bounds for a list of n items.
std::pair<size_t, size_t> slice_to_last(int64_t start, size_t n) {
  const int64_t end = std::max<int64_t>(static_cast<int64_t>(n) - 1, 0);
  const int64_t b = std::clamp<int64_t>(start, 0, static_cast<int64_t>(n));
  return {static_cast<size_t>(b), static_cast<size_t>(std::max(b, end))};
}

// Choices ordered by their "index" (sorted(out["choices"], key=itemgetter("index"))).
std::vector<const Json*> choices_by_index(const Json& response) {
  if (!response.is_object() || !response.contains("choices") || !response["choices"].is_array())
    throw MalformedResponse("the answer has no \"choices\" list");
  std::vector<const Json*> out;
  for (const auto& c : response["choices"]) {
    if (!c.is_object() || !c.contains("index") || !c["index"].is_number_integer())
      throw MalformedResponse("a choice has no integer \"index\"");
    out.push_back(&c);
  }
  std::stable_sort(out.begin(), out.end(), [](const Json* a, const Json* b) {
    return (*a)["index"].get<int64_t>() < (*b)["index"].get<int64_t>();
  });
  return out;
}

}  // namespace

Json loglikelihood_payload(const Json& model, const Json& prompt, int64_t seed) {
  Json p = Json::object();
  p["model"] = model;
  p["prompt"] = prompt;
  p["temperature"] = 0;
  p["max_tokens"] = 1;
  p["logprobs"] = 1;
  p["seed"] = seed;
  p["echo"] = true;
  return p;
}

Json generation_payload(const PayloadStyle& style, const Json& model, const Json& prompt,
                        const Json& gen_kwargs_in, int64_t default_max_gen_toks, int64_t seed,
                        const std::optional<std::string>& eos) {
  // The pops every payload builder does (gen_kwargs.hpp); OpenAIChatCompletion's until defaults
  // to ["<|endoftext|>"].
  gen_kwargs::PayloadGenKwargs g =
      gen_kwargs::pop_for_payload(gen_kwargs_in, default_max_gen_toks,
                                  style.openai_chat ? Json::array({"<|endoftext|>"}) : Json(), eos);
  Json p = Json::object();
  if (style.endpoint == Endpoint::kCompletions) {
    // LocalCompletionsAPI._create_payload(generate=True)
    p["prompt"] = prompt;
    p["model"] = model;
    p["max_tokens"] = g.max_tokens;
    p["temperature"] = g.temperature;
    p["stop"] = g.stop;
  } else {
    // LocalChatCompletion / OpenAIChatCompletion._create_payload: stop[:4]
    if (g.stop.size() > 4) g.stop.resize(4);
    p["messages"] = prompt;
    p["model"] = model;
    p[style.openai_chat ? "max_completion_tokens" : "max_tokens"] = g.max_tokens;
    p["temperature"] = g.temperature;
    p["stop"] = g.stop;
  }
  p["seed"] = seed;
  for (auto it = g.rest.begin(); it != g.rest.end(); ++it) p[it.key()] = it.value();
  if (style.openai_chat) {
    const std::string m = model.is_string() ? model.get<std::string>() : "";
    if (m.find("o1") != std::string::npos || m.find('5') != std::string::npos ||
        m.find("o3") != std::string::npos || m.find("o4") != std::string::npos) {
      p.erase("stop");
      p["temperature"] = 1;
    }
  }
  return p;
}

Json parse_body(const std::string& body) {
  if (json_nesting_exceeds(body))
    throw MalformedResponse("the answer nests lists/objects more than " +
                            std::to_string(kMaxNestingDepth) + " levels deep");
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) throw MalformedResponse("the answer is not JSON: " + excerpt(body));
  return j;
}

std::vector<LoglikelihoodResult> parse_logprobs(const Json& response,
                                                const std::vector<int64_t>& ctxlens,
                                                const std::vector<int64_t>& prompt_lens,
                                                bool exact) {
  auto choices = choices_by_index(response);
  if (choices.size() != ctxlens.size())
    throw MalformedResponse("the answer has " + std::to_string(choices.size()) + " choices for " +
                            std::to_string(ctxlens.size()) + " prompts");
  std::vector<LoglikelihoodResult> out;
  for (size_t i = 0; i < choices.size(); ++i) {
    const Json& c = *choices[i];
    const std::string which = "choice " + std::to_string(i);
    if (!c.contains("logprobs") || !c["logprobs"].is_object())
      throw MalformedResponse(which +
                              " has no \"logprobs\" (does the server support echo with logprobs?)");
    const Json& lp = c["logprobs"];
    if (!lp.contains("token_logprobs") || !lp["token_logprobs"].is_array())
      throw MalformedResponse(which + " has no logprobs.token_logprobs list");
    if (!lp.contains("top_logprobs") || !lp["top_logprobs"].is_array())
      throw MalformedResponse(which + " has no logprobs.top_logprobs list");
    const Json& toks = lp["token_logprobs"];
    const Json& tops = lp["top_logprobs"];
    if (i < prompt_lens.size()) {
      const auto n = static_cast<int64_t>(toks.size());
      const int64_t want = prompt_lens[i] + 1;
      if (exact ? n < want : (prompt_lens[i] > ctxlens[i] && n <= ctxlens[i] + 1))
        throw MalformedResponse(
            which + " logprobs.token_logprobs has " + std::to_string(n) +
            " entries for an echoed prompt of " + std::to_string(prompt_lens[i]) +
            " tokens (expected " + (exact ? "" : "about ") + std::to_string(want) +
            ": one per prompt token and one for the generated token; does the server echo the "
            "prompt's log-probs?)");
    }
    auto [b, e] = slice_to_last(ctxlens[i], toks.size());
    auto [tb, te] = slice_to_last(ctxlens[i], tops.size());
    LoglikelihoodResult r{0.0, true};
    for (size_t k = b; k < e; ++k) {
      if (!toks[k].is_number())
        throw MalformedResponse(which + " token_logprobs[" + std::to_string(k) + "] is " +
                                toks[k].dump());
      r.loglikelihood += toks[k].get<double>();
    }
    // zip(tokens_logprobs, top_logprobs): stops at the shorter; the first miss ends the check.
    for (size_t k = 0; b + k < e && tb + k < te; ++k) {
      const Json& top = tops[tb + k];
      if (!top.is_object() || top.empty())
        throw MalformedResponse(which + " top_logprobs[" + std::to_string(tb + k) + "] is " +
                                top.dump());
      double best = -std::numeric_limits<double>::infinity();
      for (auto it = top.begin(); it != top.end(); ++it) {
        if (!it.value().is_number())
          throw MalformedResponse(which + " top_logprobs[" + std::to_string(tb + k) + "] holds " +
                                  it.value().dump());
        best = std::max(best, it.value().get<double>());
      }
      if (toks[b + k].get<double>() != best) {
        r.is_greedy = false;
        break;
      }
    }
    out.push_back(r);
  }
  return out;
}

std::vector<std::optional<std::string>> parse_generations(
    Endpoint endpoint, const Json& response, size_t expected,
    const std::optional<std::string>& think_end_token) {
  if (!response.is_object() || !response.contains("choices") || !response["choices"].is_array())
    throw MalformedResponse("the answer has no \"choices\" list");
  const Json& choices = response["choices"];
  if (choices.size() != expected)
    throw MalformedResponse("the answer has " + std::to_string(choices.size()) + " choices for " +
                            std::to_string(expected) + " prompts");
  std::vector<std::optional<std::string>> out(expected);
  std::vector<bool> seen(expected, false);
  for (const auto& c : choices) {
    if (!c.is_object() || !c.contains("index") || !c["index"].is_number_integer())
      throw MalformedResponse("a choice has no integer \"index\"");
    const int64_t idx = c["index"].get<int64_t>();
    if (idx < 0 || static_cast<size_t>(idx) >= expected || seen[idx])
      throw MalformedResponse("choice index " + std::to_string(idx) +
                              " is out of range or repeated");
    seen[idx] = true;
    const Json* text = nullptr;
    if (endpoint == Endpoint::kCompletions) {
      if (!c.contains("text"))
        throw MalformedResponse("choice " + std::to_string(idx) + " has no \"text\"");
      text = &c["text"];
    } else {
      if (!c.contains("message") || !c["message"].is_object() || !c["message"].contains("content"))
        throw MalformedResponse("choice " + std::to_string(idx) + " has no \"message.content\"");
      text = &c["message"]["content"];
    }
    if (text->is_null()) continue;
    if (!text->is_string())
      throw MalformedResponse("choice " + std::to_string(idx) + " text is " + text->dump());
    std::string s = text->get<std::string>();
    // postprocess_generated_text(content, stop=None, think_end_token): what follows the last
    // think_end_token, left-stripped.
    if (endpoint == Endpoint::kChat && think_end_token && !think_end_token->empty()) {
      size_t p = s.rfind(*think_end_token);
      if (p != std::string::npos) s = s.substr(p + think_end_token->size());
      s = std::string(unicode::py_lstrip(s));
    }
    out[idx] = std::move(s);
  }
  return out;
}

}  // namespace lmeval::api

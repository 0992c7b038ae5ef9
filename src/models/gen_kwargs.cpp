// gen_kwargs as HFLM and the API models read them (models/gen_kwargs.hpp).
#include "lmeval/models/gen_kwargs.hpp"

#include <algorithm>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/models/model_args.hpp"

namespace lmeval::gen_kwargs {

namespace {

const Json& value_of(const Json& kw, const char* key) {
  static const Json kNull;
  return kw.is_object() && kw.contains(key) ? kw[key] : kNull;
}

}  // namespace

std::vector<std::string> stop_sequences(const Json& until, const std::optional<std::string>& eos,
                                        UntilRule rule) {
  std::vector<std::string> out;
  if (until.is_string()) {
    out.push_back(until.get<std::string>());
  } else if (until.is_array()) {
    for (const auto& u : until) {
      if (u.is_string())
        out.push_back(u.get<std::string>());
      else if (rule == UntilRule::kHf)
        out.push_back(u.dump());
      else
        throw RuntimeError("generation_kwargs until holds " + u.dump() + "; expected strings");
    }
  } else if (!until.is_null()) {
    if (rule == UntilRule::kHf)
      throw UserError("until must be a string or a list", {"", 0, 0, "generation_kwargs.until"},
                      "str or list");
    throw RuntimeError("Expected `kwargs['until']` to be of type Union[str,list] but got " +
                       until.dump());
  }
  if (eos && std::find(out.begin(), out.end(), *eos) == out.end()) out.push_back(*eos);
  return out;
}

HfGenKwargs normalize_for_hf(const Json& kw, int64_t default_max_gen_toks, const std::string& eos) {
  HfGenKwargs g;
  // The stop strings first (their error comes before a bad max-token value's); eos last.
  g.until = stop_sequences(value_of(kw, "until"), std::nullopt, UntilRule::kHf);
  g.max_gen_toks = default_max_gen_toks;
  for (const char* k : kMaxTokenAliases)
    if (const Json& v = value_of(kw, k); !v.is_null()) {
      g.max_gen_toks = model_args::as_int(v, k);  // normalize_gen_kwargs: int(...)
      break;
    }
  // float(kwargs.get("temperature", 0.0)): numbers, booleans, numeric text; else it raises.
  const Json& t = value_of(kw, "temperature");
  if (t.is_number())
    g.temperature = t.get<double>();
  else if (t.is_boolean())
    g.temperature = t.get<bool>() ? 1.0 : 0.0;
  else if (kw.is_object() && kw.contains("temperature") &&
           !(t.is_string() && python_float(t.get<std::string>(), g.temperature)))
    throw UserError("temperature " + t.dump() + " is not a number",
                    {"", 0, 0, "generation_kwargs.temperature"},
                    "a number (the reference converts it with float())");
  const Json& s = value_of(kw, "do_sample");
  g.do_sample = !s.is_null() ? model_args::as_bool(s, "do_sample") : g.temperature > 0.0;
  // HFLM.generate_until: handle_stop_sequences(..., eos=tok_decode(eot_token_id)).
  if (!eos.empty() && std::find(g.until.begin(), g.until.end(), eos) == g.until.end())
    g.until.push_back(eos);
  return g;
}

PayloadGenKwargs pop_for_payload(const Json& gen_kwargs, int64_t default_max_gen_toks,
                                 const Json& default_until, const std::optional<std::string>& eos) {
  PayloadGenKwargs p;
  Json g = gen_kwargs.is_object() ? gen_kwargs : Json::object();
  g.erase("do_sample");
  // `"max_tokens" in gen_kwargs` decides, even when its value is None.
  if (g.contains("max_tokens")) {
    p.max_tokens = g["max_tokens"];
    g.erase("max_tokens");
  } else if (g.contains("max_gen_toks")) {
    p.max_tokens = g["max_gen_toks"];
    g.erase("max_gen_toks");
  } else {
    p.max_tokens = default_max_gen_toks;
  }
  p.temperature = 0;
  if (g.contains("temperature")) {
    p.temperature = g["temperature"];
    g.erase("temperature");
  }
  Json until = default_until;
  if (g.contains("until")) {
    until = g["until"];
    g.erase("until");
  }
  p.stop = stop_sequences(until, eos, UntilRule::kApi);
  p.rest = std::move(g);
  return p;
}

int64_t api_context_max_gen_toks(const Json& gen_kwargs, int64_t default_max_gen_toks) {
  const Json& v = value_of(gen_kwargs, "max_gen_toks");
  return v.is_number() ? v.get<int64_t>() : default_max_gen_toks;
}

}  // namespace lmeval::gen_kwargs

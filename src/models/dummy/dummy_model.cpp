// The `dummy` model: the deterministic sha256-based fake model of ../shared/goldens (`hashfake`),
// so the reference's own results files can be reproduced number for number without a network.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_table.hpp"
#include "lmeval/models/special_tokens.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"

// The model_args table names only the members each entry sets (designated initializers); GCC 12
// would warn about every member left to its default. (Popped at the end: unity builds join files.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace lmeval {

namespace {

constexpr char kSep = '\x1f';

double u(const std::string& h, size_t i) {
  return static_cast<double>(std::strtoul(h.substr(8 * i, 8).c_str(), nullptr, 16)) / 4294967296.0;
}

// LMEVAL_DUMMY_DELAY_MS=<n>: sleep n ms per request, so tests can kill or interrupt a run half
// way; a delayed model reports progress after every request, as a backend does after a batch.
long delay_ms() {
  static const long ms = [] {
    const char* v = std::getenv("LMEVAL_DUMMY_DELAY_MS");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  return ms;
}

void delay(size_t requests) {
  if (delay_ms() > 0)
    std::this_thread::sleep_for(
        std::chrono::milliseconds(delay_ms() * static_cast<long>(requests)));
}

class DummyLM : public LM {
 public:
  // A non-empty salt makes a different fake model (other scores on the same requests), so tests of
  // compare/analyze have several "models"; without one the hashes are the goldens' hashfake.
  explicit DummyLM(const std::string& salt, std::unique_ptr<Tokenizer> tokenizer)
      : salt_(salt.empty() ? salt : salt + kSep), tokenizer_(std::move(tokenizer)) {}

  // With tokenizer=<folder>: that tokenizer's chat template, as the reference's DummyLM renders
  // through its tokenizer's (and HFLM through the model's); the answers stay the hashes.
  std::optional<std::string> chat_template(const std::string& name) const override {
    if (!tokenizer_) return std::nullopt;
    std::string t = tokenizer_->chat_template(name);
    if (t.empty()) return std::nullopt;
    return t;
  }
  std::string chat_template_source() const override {
    return tokenizer_ ? tokenizer_->chat_template_source() : std::string();
  }
  Json chat_template_variables() const override {
    return tokenizer_ ? chat_template_special_tokens(*tokenizer_) : Json::object();
  }

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& reqs) override {
    std::vector<LoglikelihoodResult> out;
    out.reserve(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      delay(1);
      // Slowed down (stop tests): a stop during the wait is noticed before the answer is given.
      if (progress_ && delay_ms() > 0) progress_(i, reqs.size(), -1);
      std::string h = sha256_hex(salt_ + "ll" + std::string(1, kSep) + reqs[i].context + kSep +
                                 reqs[i].continuation);
      out.push_back({-10.0 * u(h, 0), u(h, 1) < 0.25});
      answered(i, out.back());
      if (progress_ && (i + 1) % 1024 == 0) progress_(i + 1, reqs.size(), -1);
    }
    if (progress_) progress_(reqs.size(), reqs.size(), -1);
    return out;
  }

  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override {
    std::vector<double> out;
    for (const auto& t : texts) {
      delay(1);
      if (progress_ && delay_ms() > 0) progress_(out.size(), texts.size(), -1);
      std::string h = sha256_hex(salt_ + "rolling" + std::string(1, kSep) + t);
      double n = static_cast<double>(t.size());
      out.push_back(-((0.5 + u(h, 0)) * n));
      answered_rolling(out.size() - 1, out.back());
    }
    if (progress_) progress_(texts.size(), texts.size(), -1);
    return out;
  }

  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& reqs) override {
    std::vector<std::string> out;
    for (const auto& r : reqs) {
      delay(1);
      if (progress_ && delay_ms() > 0) progress_(out.size(), reqs.size(), -1);
      std::string h = sha256_hex(salt_ + "gen" + std::string(1, kSep) + r.context);
      unsigned long n = std::strtoul(h.substr(0, 8).c_str(), nullptr, 16) % 100;
      std::string text = " The answer is " + std::to_string(n) + ".\n\n#### " + std::to_string(n);
      std::vector<std::string> until;
      if (r.gen_kwargs.is_object() && r.gen_kwargs.contains("until")) {
        const auto& u = r.gen_kwargs["until"];
        if (u.is_string())
          until.push_back(u.get<std::string>());
        else if (u.is_array())
          for (const auto& s : u)
            if (s.is_string()) until.push_back(s.get<std::string>());
      }
      size_t cut = std::string::npos;
      for (const auto& s : until) {
        if (s.empty()) continue;
        size_t p = text.find(s);
        if (p != std::string::npos && (cut == std::string::npos || p < cut)) cut = p;
      }
      out.push_back(cut == std::string::npos ? text : text.substr(0, cut));
      answered(out.size() - 1, out.back());
    }
    if (progress_) progress_(reqs.size(), reqs.size(), -1);
    return out;
  }

 private:
  std::string salt_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

// The dummy model's model_args: all optional, none changing the hashes but salt.
struct DummyArgs {
  std::string salt;
  std::string tokenizer;
};

const ModelArgTable<DummyArgs>& dummy_model_args() {
  static const ModelArgTable<DummyArgs> table = {
      model_args::accepted<DummyArgs>(
          {.key = "pretrained", .doc = "Used only as the model name (the goldens' `hashfake`)"}),
      // The value as given: a string as is, anything else (None included) as its JSON text.
      model_args::none_is_a_value(ModelArg<DummyArgs>{
          {.key = "salt", .doc = "A different fake model (other scores for the same requests)"},
          true,
          [](DummyArgs& a, const Json& v) {
            a.salt = v.is_string() ? v.get<std::string>() : v.dump();
          }}),
      ModelArg<DummyArgs>{
          {.key = "tokenizer",
           .doc = "A local tokenizer folder whose chat template --apply_chat_template renders"},
          true,
          [](DummyArgs& a, const Json& v) {
            a.tokenizer = v.is_string() ? v.get<std::string>() : v.dump();
          }},
      model_args::accepted<DummyArgs>(
          {.key = "trust_remote_code",
           .doc = "Accepted; no effect (the reference's runs pass it)"}),
  };
  return table;
}

}  // namespace

void register_core_models(ModelRegistry& registry) {
  ModelInfoEntry e;
  e.name = "dummy";
  e.description = "deterministic fake model (sha256 of the request; the goldens' hashfake)";
  e.args = model_args::infos(dummy_model_args());
  e.factory = [](const Json& args, const ModelOptions&) -> std::unique_ptr<LM> {
    const auto known = model_args::keys(dummy_model_args());
    for (auto it = args.begin(); it != args.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end())
        throw UserError("unknown model_args key '" + it.key() + "' for model dummy",
                        {"", 0, 0, "--model_args"},
                        "pretrained (used only as the model name), salt or tokenizer");
    DummyArgs a;
    model_args::apply(dummy_model_args(), args, a, ModelArgOrder::AsGiven);
    std::unique_ptr<Tokenizer> tokenizer;
    if (!a.tokenizer.empty()) {
      if (!std::filesystem::is_directory(a.tokenizer))
        throw UserError("model_args tokenizer=" + a.tokenizer + " is not a folder",
                        {"", 0, 0, "--model_args"},
                        "a local folder with tokenizer.json or tokenizer.model");
      tokenizer = load_tokenizer(a.tokenizer);
    }
    return std::make_unique<DummyLM>(a.salt, std::move(tokenizer));
  };
  registry.add(e, {"hashfake"});
}

}  // namespace lmeval

#pragma GCC diagnostic pop

// model_args of the API models (the reference's TemplateAPI and openai_completions.py defaults),
// tokenizer loading, and registration.
#include "lmeval/models/api/api_models.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/python_env.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/models/model_arg_table.hpp"
#include "models/api/anthropic_completions_lm.hpp"
#include "models/api/api_lm.hpp"
#include "models/api/gguf_lm.hpp"
#include "models/api/sglang_lm.hpp"
#include "models/api/textsynth_lm.hpp"
#include "models/api/vllm_lm.hpp"
#include "models/api/watsonx_lm.hpp"

// Each table entry names only the members it sets (designated initializers); GCC 12 would warn
// about every member left to its default. (Popped at the end: unity builds join files.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace lmeval::api {

namespace fs = std::filesystem;
namespace ma = model_args;

const char* kind_name(ApiKind kind) {
  switch (kind) {
    case ApiKind::kLocalCompletions:
      return "local-completions";
    case ApiKind::kLocalChat:
      return "local-chat-completions";
    case ApiKind::kOpenAICompletions:
      return "openai-completions";
    case ApiKind::kOpenAIChat:
      return "openai-chat-completions";
    case ApiKind::kAnthropicChat:
      return "anthropic-chat";
  }
  return "api";
}

namespace {

// Upper bound of integer model_args that count tokens: what an int holds downstream.
constexpr int64_t kApiMaxIntArg = 2147483647;

void check_bool(const Json& v, const std::string& key) { (void)ma::as_bool(v, key); }

// The reference's TemplateAPI.__init__ arguments (and openai_completions.py's), in the order the
// unknown-key error lists them and parse_api_args applies them. None leaves a default in place
// (the reference's defaults are None-safe), except for tokenizer_backend, where None means none.
ModelArgTable<ApiArgs> make_api_table() {
  using ma::boolean;
  using ma::integer;
  using ma::none_is_a_value;
  using ma::text;
  const std::string kTokens = "1 to " + std::to_string(kApiMaxIntArg);
  ModelArgTable<ApiArgs> t = {
      ModelArg<ApiArgs>{
          {.key = "model", .doc = "The served model's name, sent as `model` in every request"},
          true,
          [](ApiArgs& a, const Json& v) { a.model = ma::as_string(v); }},
      ModelArg<ApiArgs>{{.key = "pretrained", .doc = "Same as model (used when model is absent)"},
                        true,
                        [](ApiArgs& a, const Json& v) {
                          if (a.model.is_null()) a.model = ma::as_string(v);
                        }},
      text(&ApiArgs::base_url,
           {.key = "base_url",
            .default_value = "openai-*: the OpenAI endpoint; local-*: (required)",
            .accepted = "http(s)://HOST:PORT/v1/completions or /v1/chat/completions",
            .doc = "The endpoint requests are posted to"}),
      text(&ApiArgs::tokenizer, {.key = "tokenizer",
                                 .default_value = "model",
                                 .doc = "Tokenizer folder or Hub id (files only, no weights)"}),
      none_is_a_value(ModelArg<ApiArgs>{
          {.key = "tokenizer_backend",
           .default_value =
               "local-completions: `auto`; openai-completions: `tiktoken`; chat: `None`",
           .accepted = "huggingface, auto (= huggingface), tiktoken, None",
           .doc = "How prompts are tokenized (None: sent as text, no loglikelihood)"},
          true,
          [](ApiArgs& a, const Json& v) {
            a.tokenizer_backend = ma::is_none(v) ? "none" : ma::as_string(v);
          }}),
      boolean(&ApiArgs::tokenized_requests, {.key = "tokenized_requests",
                                             .default_value = "completions: `True`; chat: `False`",
                                             .doc = "Send token ids rather than text"}),
      integer(&ApiArgs::num_concurrent, 1, 65536,
              {.key = "num_concurrent",
               .default_value = "`1`",
               .accepted = "1 to 65536",
               .doc = "Requests in flight at once"}),
      integer(&ApiArgs::max_retries, 1, 1000,
              {.key = "max_retries",
               .default_value = "`3`",
               .accepted = "1 to 1000",
               .doc = "Attempts per request in all"}),
      ModelArg<ApiArgs>{{.key = "timeout",
                         .type = ModelArgType::Number,
                         .default_value = "`300`",
                         .accepted = "seconds, more than 0 and at most 86400",
                         .doc = "Seconds per HTTP request"},
                        true,
                        [](ApiArgs& a, const Json& v) {
                          a.timeout_s = ma::as_double(v, "timeout");
                          if (!(a.timeout_s > 0 && a.timeout_s <= 86400))  // also refuses nan
                            throw UserError(
                                "model_args timeout=" + ma::as_string(v) + " is out of range",
                                {"", 0, 0, "--model_args timeout"},
                                "seconds, more than 0 and at most 86400");
                        }},
      // Read by parse_api_args after the table, where --batch_size wins over it.
      ma::accepted<ApiArgs>({.key = "batch_size",
                             .default_value = "`1`",
                             .accepted = "N (" + kTokens + "); auto means 1",
                             .doc = "Prompts per request; --batch_size wins when given"}),
      integer(&ApiArgs::max_length, 2, kApiMaxIntArg,
              {.key = "max_length",
               .default_value = "`2048`",
               .accepted = "2 to " + std::to_string(kApiMaxIntArg),
               .doc = "The model's context length (one token is kept for generation)"}),
      integer(&ApiArgs::max_gen_toks, 1, kApiMaxIntArg,
              {.key = "max_gen_toks",
               .default_value = "`256`",
               .accepted = kTokens,
               .doc = "Tokens to generate when gen_kwargs do not say"}),
      integer(&ApiArgs::seed, INT64_MIN, INT64_MAX,
              {.key = "seed", .default_value = "`1234`", .doc = "Sent as `seed` in every request"}),
      text(&ApiArgs::eos_string, {.key = "eos_string",
                                  .default_value = "the tokenizer's EOS",
                                  .doc = "Added to every generation's stop sequences"}),
      boolean(&ApiArgs::add_bos_token, {.key = "add_bos_token",
                                        .default_value = "`False`",
                                        .doc = "Encode with the tokenizer's special tokens"}),
      integer(&ApiArgs::custom_prefix_token_id, INT64_MIN, INT64_MAX,
              {.key = "custom_prefix_token_id",
               .default_value = "BOS, else EOS",
               .doc = "Token scored before an empty context"}),
      ma::accepted<ApiArgs>({.key = "truncate",
                             .type = ModelArgType::Bool,
                             .default_value = "`False`",
                             .doc = "Accepted; no effect"},
                            [](const Json& v) { check_bool(v, "truncate"); }),
      text(&ApiArgs::revision,
           {.key = "revision", .default_value = "`main`", .doc = "The tokenizer's Hub revision"}),
      ma::accepted<ApiArgs>({.key = "trust_remote_code",
                             .type = ModelArgType::Bool,
                             .default_value = "`False`",
                             .doc = "Accepted; no effect"},
                            [](const Json& v) { check_bool(v, "trust_remote_code"); }),
      ma::accepted<ApiArgs>({.key = "use_fast_tokenizer",
                             .type = ModelArgType::Bool,
                             .default_value = "`True`",
                             .doc = "Accepted; no effect"},
                            [](const Json& v) { check_bool(v, "use_fast_tokenizer"); }),
      boolean(&ApiArgs::verify_certificate, {.key = "verify_certificate",
                                             .default_value = "`True`",
                                             .doc = "Check the server's TLS certificate"}),
      text(&ApiArgs::ca_cert_path,
           {.key = "ca_cert_path", .doc = "CA bundle for the server's TLS certificate"}),
      // Taken out of model_args as a secret before anything copies them (EvalConfig); unused.
      ma::accepted<ApiArgs>({.key = "auth_token", .doc = "Accepted; not used (secret)"}),
      ModelArg<ApiArgs>{{.key = "header",
                         .type = ModelArgType::Object,
                         .doc = "HTTP headers, replacing the Authorization header (secret)"},
                        true,
                        [](ApiArgs& a, const Json& v) {
                          Json h = v;
                          if (h.is_string()) {
                            require_json_nesting(h.get<std::string>(),
                                                 SourceLocation{"", 0, 0, "--model_args header"});
                            h = Json::parse(h.get<std::string>(), nullptr, false);
                          }
                          if (!h.is_object())
                            throw UserError(
                                "model_args header is not an object",
                                {"", 0, 0, "--model_args header"},
                                "a JSON object of header names and values (use JSON --model_args)");
                          a.header = h;
                        }},
      ma::accepted<ApiArgs>({.key = "max_images",
                             .type = ModelArgType::Int,
                             .doc = "Accepted; no effect (text only)"},
                            [](const Json& v) { (void)ma::as_int(v, "max_images"); }),
      text(&ApiArgs::think_end_token,
           {.key = "think_end_token",
            .doc = "Chat answers keep only what follows its last occurrence"}),
      text(&ApiArgs::api_key, {.key = "api_key",
                               .default_value = "$OPENAI_API_KEY",
                               .doc = "The key sent as a Bearer token (secret; never logged)"}),
  };
  return t;
}

}  // namespace

const ModelArgTable<ApiArgs>& api_model_args() {
  static const ModelArgTable<ApiArgs> table = make_api_table();
  return table;
}

const std::vector<std::string>& api_known_args() {
  static const std::vector<std::string> keys = ma::keys(api_model_args());
  return keys;
}

ApiArgs parse_api_args(ApiKind kind, const Json& model_args, const ModelOptions& options,
                       bool notes) {
  ma::check_known(model_args, kind_name(kind), api_known_args());
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto has = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };

  ApiArgs a;
  a.kind = kind;
  const bool chat = kind == ApiKind::kLocalChat || kind == ApiKind::kOpenAIChat ||
                    kind == ApiKind::kAnthropicChat;
  // Defaults of each class's __init__.
  a.tokenizer_backend = chat ? "none" : (kind == ApiKind::kOpenAICompletions ? "tiktoken" : "auto");
  if (kind == ApiKind::kOpenAICompletions) a.base_url = "https://api.openai.com/v1/completions";
  if (kind == ApiKind::kOpenAIChat) a.base_url = "https://api.openai.com/v1/chat/completions";
  if (kind == ApiKind::kAnthropicChat) a.base_url = "https://api.anthropic.com/v1/messages";
  a.tokenized_requests = !chat;
  ma::apply(api_model_args(), args, a, ModelArgOrder::Table);

  // batch_size: --batch_size wins over model_args; "auto" is not supported for API models.
  std::string bs = has("batch_size") ? ma::as_string(args["batch_size"]) : "1";
  if (options.batch_size) bs = *options.batch_size;
  if (bs.rfind("auto", 0) == 0) {
    if (notes)
      spdlog::warn(
          "Automatic batch size is not supported for API models. Defaulting to batch size 1.");
    bs = "1";
  }
  a.batch_size = static_cast<int>(
      check_batch_size(bs, options.batch_size ? "--batch_size" : "--model_args batch_size"));
  if (a.base_url.empty())
    throw UserError(std::string(kind_name(kind)) + " needs base_url",
                    {"", 0, 0, "--model_args base_url"},
                    chat ? "base_url=http://HOST:PORT/v1/chat/completions"
                         : "base_url=http://HOST:PORT/v1/completions");
  {
    // libcurl would read file:// (and print it in its error) or try ftp:// and the rest.
    const size_t sep = a.base_url.find("://");
    std::string scheme = sep == std::string::npos ? "" : a.base_url.substr(0, sep);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "http" && scheme != "https")
      throw UserError(
          std::string(kind_name(kind)) + ": base_url " +
              (sep == std::string::npos ? std::string("has no scheme")
                                        : "has the scheme '" + scheme.substr(0, 16) + "'"),
          {"", 0, 0, "--model_args base_url"},
          "an http:// or https:// URL, e.g. " +
              std::string(chat ? "http://HOST:PORT/v1/chat/completions"
                               : "http://HOST:PORT/v1/completions"));
  }

  std::string backend = a.tokenizer_backend;
  if (backend == "auto") backend = "huggingface";  // the remote /tokenize probe is not done
  if (backend == "None" || backend == "none") backend = "";
  if (backend == "remote")
    throw UserError("tokenizer_backend=remote is not supported",
                    {"", 0, 0, "--model_args tokenizer_backend"},
                    "tokenizer_backend=huggingface with tokenizer=<the served model's tokenizer "
                    "folder or Hub id>");
  if (backend == "tiktoken") {
    // tiktoken's BPE files are not built in: a tokenizer.json of the same encoding stands in.
    if (!a.tokenizer.empty()) {
      backend = "huggingface";
    } else {
      if (notes)
        spdlog::warn(
            "{}: tiktoken is not built in; prompts are sent as text (pass tokenizer=<folder with a "
            "tokenizer.json of the model's encoding> for token prompts and loglikelihood)",
            kind_name(kind));
      backend = "";
    }
  }
  if (!backend.empty() && backend != "huggingface")
    throw UserError("unknown tokenizer_backend '" + backend + "'",
                    {"", 0, 0, "--model_args tokenizer_backend"}, "huggingface, tiktoken, none");
  a.tokenizer_backend = backend;
  if (backend.empty()) a.tokenized_requests = false;
  if (chat && a.tokenized_requests)
    throw UserError(std::string(kind_name(kind)) + " sends messages, not token ids",
                    {"", 0, 0, "--model_args tokenized_requests"},
                    "tokenized_requests=False (the default)");
  if (!backend.empty() && a.tokenizer.empty()) {
    if (!a.model.is_string())
      throw UserError(std::string(kind_name(kind)) + " needs a tokenizer: model or tokenizer",
                      {"", 0, 0, "--model_args tokenizer"},
                      "tokenizer=<folder or Hub id>, or tokenizer_backend=None");
    a.tokenizer = a.model.get<std::string>();
  }

  // The key: model_args api_key (applied above), else OPENAI_API_KEY (AnthropicChat:
  // ANTHROPIC_API_KEY). Never logged.
  const bool anthropic = kind == ApiKind::kAnthropicChat;
  if (!has("api_key"))
    if (const char* k = std::getenv(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"))
      a.api_key = k;
  if ((kind == ApiKind::kOpenAICompletions || kind == ApiKind::kOpenAIChat) && a.api_key.empty())
    throw UserError("API key not found. Please set the `OPENAI_API_KEY` environment variable.",
                    {"", 0, 0, "OPENAI_API_KEY"}, "an OpenAI API key");
  if (anthropic && a.api_key.empty())
    throw UserError("API key not found. Please set the ANTHROPIC_API_KEY environment variable.",
                    {"", 0, 0, "ANTHROPIC_API_KEY"}, "an Anthropic API key");
  if (anthropic && a.header && notes)
    spdlog::warn(
        "anthropic-chat: model_args header is not used (AnthropicChat sends x-api-key "
        "and anthropic-version headers of its own)");
  return a;
}

namespace {

// A tokenizer folder, or the tokenizer files of a Hub repo (only those: no weights).
fs::path tokenizer_dir(const std::string& name, const std::string& revision) {
  if (fs::exists(name)) return name;
  if (name.empty() || name.front() == '/' || name.front() == '.' ||
      std::count(name.begin(), name.end(), '/') > 1)
    throw UserError("tokenizer '" + name + "' does not exist", {"", 0, 0, "--model_args tokenizer"},
                    "a tokenizer folder or a Hub repo id such as EleutherAI/pythia-160m");
  hub::HubClient client;
  hub::RepoRef repo{hub::RepoType::kModel, name, revision.empty() ? "main" : revision};
  auto info = client.repo_info(repo);
  bool any = false;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                        "tokenizer.model", "chat_template.jinja", "chat_template.json"}) {
    if (std::find(info.files.begin(), info.files.end(), f) == info.files.end()) continue;
    if (client.config().offline) {
      any |= fs::exists(client.snapshot_dir(repo, info.commit) / f);
      continue;
    }
    any |= client.try_download(repo, info.commit, f).has_value();
  }
  if (!any)
    throw UserError("no tokenizer files for '" + name + "' (tokenizer.json or tokenizer.model)",
                    {"", 0, 0, "--model_args tokenizer"},
                    "a Hub repo with a tokenizer, or a local folder");
  return client.snapshot_dir(repo, info.commit);
}

// The active Python environment's interpreter, which must have `package` (the engine whose
// server lm-eval starts for --model `model`). UserError (exit 2) otherwise: the reference's
// "package is not installed" message and what to do instead.
std::string engine_python(const std::string& model, const std::string& package,
                          const std::string& install) {
  const PythonEnv env = active_python_env();
  if (env.python.empty())
    throw UserError(
        model + " needs a Python environment with the " + package + " package: " + env.described,
        {"", 0, 0, "--model " + model},
        "an activated virtual environment ($VIRTUAL_ENV) or python3 on PATH with " + package);
  int status = -1;
  run_python(env.python,
             "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('" + package +
                 "') else 3)",
             60000, &status);
  if (status != 0)
    throw UserError("attempted to use '" + model + "' LM type, but package `" + package +
                        "` is not installed in " + env.described,
                    {"", 0, 0, "--model " + model},
                    install +
                        " in that environment, or start a server yourself and use "
                        "--model local-completions");
  return env.python.string();
}

std::unique_ptr<LM> make_vllm_model(const Json& model_args, const ModelOptions& options) {
  VllmArgs a = parse_vllm_args(model_args, options);
  const std::string python = engine_python("vllm", "vllm", "pip install vllm");
  const std::string tok = a.tokenizer.empty() ? a.pretrained : a.tokenizer;
  auto tokenizer = load_tokenizer(
      tokenizer_dir(tok, a.tokenizer_revision.value_or(a.revision.value_or("main"))));
  return std::make_unique<VllmLM>(std::move(a), std::move(tokenizer), python);
}

std::unique_ptr<LM> make_sglang_model(const Json& model_args, const ModelOptions& options) {
  SglangArgs a = parse_sglang_args(model_args, options);
  const std::string python = engine_python(
      "sglang", "sglang",
      "install sglang (https://docs.sglang.ai/start/install.html: pip install \"sglang[all]\")");
  auto tokenizer = load_tokenizer(tokenizer_dir(a.tokenizer, "main"));
  return std::make_unique<SglangLM>(std::move(a), std::move(tokenizer), python);
}

std::unique_ptr<LM> make_api_model(ApiKind kind, const Json& model_args,
                                   const ModelOptions& options) {
  ApiArgs a = parse_api_args(kind, model_args, options);
  std::unique_ptr<Tokenizer> tok;
  if (!a.tokenizer_backend.empty()) tok = load_tokenizer(tokenizer_dir(a.tokenizer, a.revision));
  return std::make_unique<ApiLM>(std::move(a), std::move(tok));
}

}  // namespace

}  // namespace lmeval::api

namespace lmeval {

void register_api_models(ModelRegistry& registry) {
  struct Def {
    api::ApiKind kind;
    const char* description;
  };
  const Def defs[] = {
      {api::ApiKind::kLocalCompletions,
       "OpenAI-compatible /v1/completions server (vLLM, SGLang, llama.cpp, ...)"},
      {api::ApiKind::kLocalChat, "OpenAI-compatible /v1/chat/completions server (generation only)"},
      {api::ApiKind::kOpenAICompletions, "OpenAI completions API (OPENAI_API_KEY)"},
      {api::ApiKind::kOpenAIChat, "OpenAI chat completions API (OPENAI_API_KEY; generation only)"},
      {api::ApiKind::kAnthropicChat,
       "Anthropic's Messages API (ANTHROPIC_API_KEY; generation only; the reference's "
       "AnthropicChat)"},
  };
  for (const auto& d : defs) {
    ModelInfoEntry e;
    e.name = api::kind_name(d.kind);
    e.description = d.description;
    e.status = d.kind == api::ApiKind::kLocalCompletions || d.kind == api::ApiKind::kLocalChat
                   ? "client of a server you start"
               : d.kind == api::ApiKind::kAnthropicChat ? "client of Anthropic's API"
                                                        : "client of OpenAI's API";
    e.args = model_args::infos(api::api_model_args());
    const api::ApiKind kind = d.kind;
    e.factory = [kind](const Json& args, const ModelOptions& options) {
      return api::make_api_model(kind, args, options);
    };
    e.check = [kind](const Json& args, const ModelOptions& options) {
      (void)api::parse_api_args(kind, args, options, false);
    };
    registry.add(std::move(e), d.kind == api::ApiKind::kAnthropicChat
                                   ? std::vector<std::string>{"anthropic-chat-completions"}
                                   : std::vector<std::string>{});
  }
  ModelInfoEntry v;
  v.name = "vllm";
  v.description = "vLLM (the reference's VLLM backend) over vLLM's own OpenAI-compatible server";
  v.status = "starts vLLM's server (python -m vllm.entrypoints.openai.api_server)";
  v.args = api::vllm_arg_infos();
  v.passes_other_args = true;
  v.factory = [](const Json& args, const ModelOptions& options) {
    return api::make_vllm_model(args, options);
  };
  v.check = [](const Json& args, const ModelOptions& options) {
    (void)api::parse_vllm_args(args, options, false);
  };
  registry.add(std::move(v));

  ModelInfoEntry g;
  g.name = "sglang";
  g.description = "SGLang (the reference's SGLangLM backend) over SGLang's own server";
  g.status = "starts SGLang's server (python -m sglang.launch_server)";
  g.args = api::sglang_arg_infos();
  g.passes_other_args = true;
  g.factory = [](const Json& args, const ModelOptions& options) {
    return api::make_sglang_model(args, options);
  };
  g.check = [](const Json& args, const ModelOptions& options) {
    (void)api::parse_sglang_args(args, options, false);
  };
  registry.add(std::move(g));

  ModelInfoEntry f;
  f.name = "gguf";
  f.description =
      "a llama.cpp / llama-cpp-python server's /v1/completions (the reference's GGUFLM)";
  f.status = "client of a server you start";
  f.args = api::gguf_arg_infos();
  f.passes_other_args = true;  // GGUFLM's **kwargs takes any key and ignores it
  f.factory = [](const Json& args, const ModelOptions&) -> std::unique_ptr<LM> {
    return std::make_unique<api::GgufLM>(api::parse_gguf_args(args));
  };
  f.check = [](const Json& args, const ModelOptions&) { (void)api::parse_gguf_args(args, false); };
  registry.add(std::move(f), {"ggml"});

  ModelInfoEntry t;
  t.name = "textsynth";
  t.description = "the TextSynth API (TEXTSYNTH_API_SECRET_KEY; the reference's TextSynthLM)";
  t.status = "client of TextSynth's API";
  t.args = api::textsynth_arg_infos();
  t.passes_other_args = true;  // TextSynthLM's **kwargs takes any key and ignores it
  t.factory = [](const Json& args, const ModelOptions&) -> std::unique_ptr<LM> {
    return std::make_unique<api::TextSynthLM>(api::parse_textsynth_args(args));
  };
  t.check = [](const Json& args, const ModelOptions&) {
    (void)api::parse_textsynth_args(args, false);
  };
  registry.add(std::move(t));

  ModelInfoEntry c;
  c.name = "anthropic-completions";
  c.description =
      "Anthropic's legacy Text Completions API /v1/complete (ANTHROPIC_API_KEY; generation "
      "only; the reference's AnthropicLM)";
  c.status = "client of Anthropic's API";
  c.args = api::anthropic_completions_arg_infos();
  c.factory = [](const Json& args, const ModelOptions&) -> std::unique_ptr<LM> {
    return std::make_unique<api::AnthropicCompletionsLM>(
        api::parse_anthropic_completions_args(args));
  };
  c.check = [](const Json& args, const ModelOptions&) {
    (void)api::parse_anthropic_completions_args(args);
  };
  registry.add(std::move(c));

  ModelInfoEntry w;
  w.name = "watsonx_llm";
  w.description =
      "IBM watsonx.ai (WATSONX_URL, WATSONX_API_KEY, WATSONX_PROJECT_ID; software also "
      "WATSONX_USERNAME; the reference's WatsonxLLM)";
  w.status = "client of IBM watsonx.ai";
  w.args = api::watsonx_arg_infos();
  w.passes_other_args = true;  // WatsonxLLM ignores the keys it does not read
  w.factory = [](const Json& args, const ModelOptions&) -> std::unique_ptr<LM> {
    return std::make_unique<api::WatsonxLM>(api::parse_watsonx_args(args));
  };
  w.check = [](const Json& args, const ModelOptions&) { (void)api::parse_watsonx_args(args); };
  registry.add(std::move(w));
}

}  // namespace lmeval

#pragma GCC diagnostic pop

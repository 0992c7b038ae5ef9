// model_args of the API models (the reference's TemplateAPI and openai_completions.py defaults),
// tokenizer loading, and registration.
#include "lmeval/models/api/api_models.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/models/model_args.hpp"
#include "models/api/api_lm.hpp"

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
  }
  return "api";
}

const std::vector<std::string>& api_known_args() {
  static const std::vector<std::string> keys = {"model",
                                                "pretrained",
                                                "base_url",
                                                "tokenizer",
                                                "tokenizer_backend",
                                                "tokenized_requests",
                                                "num_concurrent",
                                                "max_retries",
                                                "timeout",
                                                "batch_size",
                                                "max_length",
                                                "max_gen_toks",
                                                "seed",
                                                "eos_string",
                                                "add_bos_token",
                                                "custom_prefix_token_id",
                                                "truncate",
                                                "revision",
                                                "trust_remote_code",
                                                "use_fast_tokenizer",
                                                "verify_certificate",
                                                "ca_cert_path",
                                                "auth_token",
                                                "header",
                                                "max_images",
                                                "think_end_token",
                                                "api_key"};
  return keys;
}

// Upper bound of integer model_args that count tokens: what an int holds downstream.
constexpr int64_t kMaxIntArg = 2147483647;

ApiArgs parse_api_args(ApiKind kind, const Json& model_args, const ModelOptions& options) {
  ma::check_known(model_args, kind_name(kind), api_known_args());
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto has = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };
  auto str = [&](const char* k) { return ma::as_string(args[k]); };

  ApiArgs a;
  a.kind = kind;
  const bool chat = kind == ApiKind::kLocalChat || kind == ApiKind::kOpenAIChat;
  // Defaults of each class's __init__.
  std::string backend = chat ? "none" : (kind == ApiKind::kOpenAICompletions ? "tiktoken" : "auto");
  if (kind == ApiKind::kOpenAICompletions) a.base_url = "https://api.openai.com/v1/completions";
  if (kind == ApiKind::kOpenAIChat) a.base_url = "https://api.openai.com/v1/chat/completions";
  a.tokenized_requests = !chat;

  if (has("model"))
    a.model = str("model");
  else if (has("pretrained"))
    a.model = str("pretrained");
  if (has("base_url")) a.base_url = str("base_url");
  if (has("tokenizer")) a.tokenizer = str("tokenizer");
  if (args.contains("tokenizer_backend"))
    backend = ma::is_none(args["tokenizer_backend"]) ? "none" : str("tokenizer_backend");
  if (has("tokenized_requests"))
    a.tokenized_requests = ma::as_bool(args["tokenized_requests"], "tokenized_requests");
  if (has("num_concurrent"))
    a.num_concurrent =
        static_cast<int>(ma::as_int_in_range(args["num_concurrent"], "num_concurrent", 1, 65536));
  if (has("max_retries"))
    a.max_retries =
        static_cast<int>(ma::as_int_in_range(args["max_retries"], "max_retries", 1, 1000));
  if (has("timeout")) a.timeout_s = ma::as_double(args["timeout"], "timeout");
  if (has("max_length"))
    a.max_length = ma::as_int_in_range(args["max_length"], "max_length", 2, kMaxIntArg);
  if (has("max_gen_toks"))
    a.max_gen_toks = ma::as_int_in_range(args["max_gen_toks"], "max_gen_toks", 1, kMaxIntArg);
  if (has("seed")) a.seed = ma::as_int(args["seed"], "seed");
  if (has("eos_string")) a.eos_string = str("eos_string");
  if (has("add_bos_token")) a.add_bos_token = ma::as_bool(args["add_bos_token"], "add_bos_token");
  if (has("custom_prefix_token_id"))
    a.custom_prefix_token_id = ma::as_int(args["custom_prefix_token_id"], "custom_prefix_token_id");
  if (has("revision")) a.revision = str("revision");
  if (has("verify_certificate"))
    a.verify_certificate = ma::as_bool(args["verify_certificate"], "verify_certificate");
  if (has("ca_cert_path")) a.ca_cert_path = str("ca_cert_path");
  if (has("think_end_token")) a.think_end_token = str("think_end_token");
  for (const char* k : {"truncate", "trust_remote_code", "use_fast_tokenizer"})
    if (has(k)) (void)ma::as_bool(args[k], k);  // accepted; nothing here depends on them
  if (has("max_images")) (void)ma::as_int(args["max_images"], "max_images");
  if (has("header")) {
    Json h = args["header"];
    if (h.is_string()) {
      require_json_nesting(h.get<std::string>(), SourceLocation{"", 0, 0, "--model_args header"});
      h = Json::parse(h.get<std::string>(), nullptr, false);
    }
    if (!h.is_object())
      throw UserError("model_args header is not an object", {"", 0, 0, "--model_args header"},
                      "a JSON object of header names and values (use JSON --model_args)");
    a.header = h;
  }

  // batch_size: --batch_size wins over model_args; "auto" is not supported for API models.
  std::string bs = has("batch_size") ? str("batch_size") : "1";
  if (options.batch_size) bs = *options.batch_size;
  if (bs.rfind("auto", 0) == 0) {
    spdlog::warn(
        "Automatic batch size is not supported for API models. Defaulting to batch size 1.");
    bs = "1";
  }
  a.batch_size = static_cast<int>(
      check_batch_size(bs, options.batch_size ? "--batch_size" : "--model_args batch_size"));
  if (a.num_concurrent < 1) a.num_concurrent = 1;
  if (a.max_retries < 1)
    throw UserError("max_retries " + std::to_string(a.max_retries) + " is not positive",
                    {"", 0, 0, "--model_args max_retries"},
                    "the number of attempts per request, 1 or more");
  if (a.max_length < 2)
    throw UserError("max_length " + std::to_string(a.max_length) + " is too small",
                    {"", 0, 0, "--model_args max_length"}, "the model's context length in tokens");
  if (!(a.timeout_s > 0 && a.timeout_s <= 86400))  // also refuses nan
    throw UserError(
        "model_args timeout=" + ma::as_string(args.value("timeout", Json())) + " is out of range",
        {"", 0, 0, "--model_args timeout"}, "seconds, more than 0 and at most 86400");
  if (a.base_url.empty())
    throw UserError(std::string(kind_name(kind)) + " needs base_url",
                    {"", 0, 0, "--model_args base_url"},
                    chat ? "base_url=http://HOST:PORT/v1/chat/completions"
                         : "base_url=http://HOST:PORT/v1/completions");

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

  // The key: model_args api_key, else OPENAI_API_KEY. Never logged.
  if (has("api_key"))
    a.api_key = str("api_key");
  else if (const char* k = std::getenv("OPENAI_API_KEY"))
    a.api_key = k;
  if ((kind == ApiKind::kOpenAICompletions || kind == ApiKind::kOpenAIChat) && a.api_key.empty())
    throw UserError("API key not found. Please set the `OPENAI_API_KEY` environment variable.",
                    {"", 0, 0, "OPENAI_API_KEY"}, "an OpenAI API key");
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
  };
  for (const auto& d : defs) {
    ModelInfoEntry e;
    e.name = api::kind_name(d.kind);
    e.description = d.description;
    e.known_args = api::api_known_args();
    const api::ApiKind kind = d.kind;
    e.factory = [kind](const Json& args, const ModelOptions& options) {
      return api::make_api_model(kind, args, options);
    };
    registry.add(std::move(e));
  }
}

}  // namespace lmeval

// --model vllm's model_args and their server options (vllm_args.hpp).
#include "models/api/vllm_args.hpp"

#include <spdlog/spdlog.h>

#include "lmeval/core/error.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/models/model_args.hpp"

namespace lmeval::api {

namespace ma = model_args;

const std::vector<ModelArgInfo>& vllm_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"pretrained", T::Text, "(required)", "a model folder or Hub id", "The model (--model)"},
      {"dtype", T::Text, "`auto`", "auto, float16, bfloat16, float32", "--dtype"},
      {"revision", T::Text, "", "", "--revision"},
      {"trust_remote_code", T::Bool, "`False`", "", "--trust-remote-code"},
      {"tokenizer", T::Text, "pretrained", "", "--tokenizer; also lm-eval's own tokenizer"},
      {"tokenizer_mode", T::Text, "`auto`", "auto, slow", "--tokenizer-mode"},
      {"tokenizer_revision", T::Text, "", "", "--tokenizer-revision"},
      {"add_bos_token", T::Bool, "the tokenizer's own rule", "", "Encode with special tokens"},
      {"prefix_token_id", T::Int, "BOS, else EOS", "", "Token scored before an empty context"},
      {"tensor_parallel_size", T::Int, "`1`", "1 or more", "--tensor-parallel-size"},
      {"quantization", T::Text, "", "", "--quantization"},
      {"max_gen_toks", T::Int, "`256`", "1 or more",
       "Tokens to generate when gen_kwargs do not say"},
      {"batch_size", T::Text, "`auto`", "", "Accepted; every request is in flight at once"},
      {"max_batch_size", T::Int, "", "", "--max-num-seqs (when max_num_seqs is not given)"},
      {"max_length", T::Int, "the server's max_model_len", "", "--max-model-len"},
      {"max_model_len", T::Int, "the server's max_model_len", "", "--max-model-len"},
      {"seed", T::Int, "`1234`", "", "--seed"},
      {"data_parallel_size", T::Int, "`1`", "1 or more",
       "Servers started, requests spread over them in turn"},
      {"lora_local_path", T::Text, "", "a LoRA adapter folder",
       "--enable-lora --lora-modules finetuned=PATH; requests name `finetuned`"},
      {"max_lora_rank", T::Int, "`16`", "", "--max-lora-rank"},
      {"enable_thinking", T::Bool, "", "", "Refused (chat_template_args; not supported yet)"},
      {"chat_template_args", T::Object, "", "", "Refused (not supported yet)"},
      {"think_end_token", T::Text, "", "",
       "Generations keep only what follows its last occurrence"},
      {"truncation_side", T::Text, "`left`", "left, right, middle",
       "Which side of a too-long context is cut"},
      {"num_concurrent", T::Int, "`256`", "1 to 65536",
       "Requests in flight per server; lm-eval's own"},
      {"server_timeout", T::Number, "`1800`", "seconds",
       "How long to wait for a server; lm-eval's own"},
      {"(any other key)", T::Text, "", "", "Passed to the server as --key-with-dashes VALUE"},
  };
  return infos;
}

void append_server_option(std::vector<std::string>& out, const std::string& key, const Json& v) {
  if (v.is_null() || ma::is_none(v)) return;
  std::string flag = "--";
  for (char c : key) flag += c == '_' ? '-' : c;
  if (v.is_boolean() || (v.is_string() && (v == "True" || v == "False"))) {
    const bool on = v.is_boolean() ? v.get<bool>() : v == "True";
    out.push_back(on ? flag : "--no-" + flag.substr(2));
    return;
  }
  out.push_back(flag);
  out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
}

VllmArgs parse_vllm_args(const Json& model_args, const ModelOptions& options, bool notes) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto given = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };
  auto text = [&](const char* k) { return ma::as_string(args[k]); };
  VllmArgs a;
  if (!given("pretrained"))
    throw UserError("vllm needs pretrained", {"", 0, 0, "--model_args pretrained"},
                    "pretrained=<a model folder or Hub id>");
  a.pretrained = text("pretrained");
  if (given("max_length") && given("max_model_len"))
    throw UserError("Either max_length or max_model_len may be provided, but not both",
                    {"", 0, 0, "--model_args max_model_len"}, "one of max_length, max_model_len");
  for (const char* k : {"enable_thinking", "chat_template_args"})
    if (given(k))
      throw UserError(std::string("model_args ") + k + " is not supported by lm-eval's vllm yet",
                      {"", 0, 0, std::string("--model_args ") + k}, "leave it out");
  if (given("max_length"))
    a.max_length = ma::as_int_in_range(args["max_length"], "max_length", 2, INT32_MAX);
  if (given("max_model_len"))
    a.max_length = ma::as_int_in_range(args["max_model_len"], "max_model_len", 2, INT32_MAX);
  if (given("tokenizer")) a.tokenizer = text("tokenizer");
  if (given("tokenizer_revision")) a.tokenizer_revision = text("tokenizer_revision");
  if (given("revision")) a.revision = text("revision");
  if (given("add_bos_token")) a.add_bos_token = ma::as_bool(args["add_bos_token"], "add_bos_token");
  if (given("prefix_token_id"))
    a.prefix_token_id = ma::as_int(args["prefix_token_id"], "prefix_token_id");
  if (given("max_gen_toks"))
    a.max_gen_toks = ma::as_int_in_range(args["max_gen_toks"], "max_gen_toks", 1, INT32_MAX);
  if (given("data_parallel_size"))
    a.data_parallel_size =
        ma::as_int_in_range(args["data_parallel_size"], "data_parallel_size", 1, 64);
  if (given("tensor_parallel_size"))
    a.tensor_parallel_size =
        ma::as_int_in_range(args["tensor_parallel_size"], "tensor_parallel_size", 1, 1024);
  if (given("pipeline_parallel_size"))
    a.pipeline_parallel_size =
        ma::as_int_in_range(args["pipeline_parallel_size"], "pipeline_parallel_size", 1, 1024);
  if (given("lora_local_path")) a.lora_local_path = text("lora_local_path");
  if (given("think_end_token")) a.think_end_token = text("think_end_token");
  if (given("truncation_side")) {
    a.truncation_side = text("truncation_side");
    if (a.truncation_side != "left" && a.truncation_side != "right" &&
        a.truncation_side != "middle")
      throw UserError("model_args truncation_side=" + a.truncation_side + " is not a side",
                      {"", 0, 0, "--model_args truncation_side"}, "left, right or middle");
  }
  if (given("num_concurrent"))
    a.num_concurrent = ma::as_int_in_range(args["num_concurrent"], "num_concurrent", 1, 65536);
  if (given("server_timeout")) {
    a.server_timeout_s = ma::as_double(args["server_timeout"], "server_timeout");
    if (!(a.server_timeout_s > 0))
      throw UserError("model_args server_timeout must be more than 0 seconds",
                      {"", 0, 0, "--model_args server_timeout"}, "seconds, more than 0");
  }
  if (given("data_parallel_size") && a.data_parallel_size > 1 && given("enable_expert_parallel") &&
      ma::as_bool(args["enable_expert_parallel"], "enable_expert_parallel"))
    throw UserError("data_parallel_size > 1 is not supported with enable_expert_parallel=True",
                    {"", 0, 0, "--model_args data_parallel_size"},
                    "tensor_parallel_size > 1 with data_parallel_size=1");
  if (notes && (given("batch_size") || options.batch_size))
    spdlog::info(
        "vllm: batch_size is not used; every request is in flight at once (up to "
        "num_concurrent per server)");
  if (notes && (options.device || args.contains("device")))
    spdlog::warn(
        "The `device` argument is ignored by the vLLM backend. To select which GPU(s) vLLM can "
        "use, set the `CUDA_VISIBLE_DEVICES` environment variable before running lm-eval.");
  if (notes && args.contains("swap_space"))
    spdlog::warn("swap_space is no longer supported by vLLM; ignoring.");

  // VLLM.__init__'s self.model_args, in its order, then **kwargs as given.
  auto& o = a.server_options;
  append_server_option(o, "revision", given("revision") ? args["revision"] : Json());
  append_server_option(o, "dtype", given("dtype") ? args["dtype"] : Json("auto"));
  if (given("tokenizer")) append_server_option(o, "tokenizer", args["tokenizer"]);
  append_server_option(o, "tokenizer_mode",
                       given("tokenizer_mode") ? args["tokenizer_mode"] : Json("auto"));
  if (given("tokenizer_revision"))
    append_server_option(o, "tokenizer_revision", args["tokenizer_revision"]);
  if (given("trust_remote_code") && ma::as_bool(args["trust_remote_code"], "trust_remote_code"))
    o.emplace_back("--trust-remote-code");
  append_server_option(o, "tensor_parallel_size", Json(a.tensor_parallel_size));
  if (a.max_length) append_server_option(o, "max_model_len", Json(*a.max_length));
  if (given("max_num_seqs"))
    append_server_option(o, "max_num_seqs", args["max_num_seqs"]);
  else if (given("max_batch_size"))
    append_server_option(o, "max_num_seqs", args["max_batch_size"]);
  if (given("quantization")) append_server_option(o, "quantization", args["quantization"]);
  append_server_option(o, "seed", Json(given("seed") ? ma::as_int(args["seed"], "seed") : 1234));
  if (a.lora_local_path) o.emplace_back("--enable-lora");
  append_server_option(
      o, "max_lora_rank",
      Json(given("max_lora_rank") ? ma::as_int(args["max_lora_rank"], "max_lora_rank") : 16));
  if (a.lora_local_path) {
    o.emplace_back("--lora-modules");
    o.push_back("finetuned=" + *a.lora_local_path);
  }
  static const char* const kTaken[] = {"pretrained",
                                       "dtype",
                                       "revision",
                                       "trust_remote_code",
                                       "tokenizer",
                                       "tokenizer_mode",
                                       "tokenizer_revision",
                                       "add_bos_token",
                                       "prefix_token_id",
                                       "tensor_parallel_size",
                                       "quantization",
                                       "max_gen_toks",
                                       "batch_size",
                                       "max_batch_size",
                                       "max_length",
                                       "max_model_len",
                                       "seed",
                                       "data_parallel_size",
                                       "lora_local_path",
                                       "enable_thinking",
                                       "chat_template_args",
                                       "think_end_token",
                                       "max_lora_rank",
                                       "truncation_side",
                                       "num_concurrent",
                                       "server_timeout",
                                       "device",
                                       "swap_space",
                                       "max_num_seqs"};
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (std::find(std::begin(kTaken), std::end(kTaken), it.key()) != std::end(kTaken)) continue;
    if (is_secret_key(it.key()) && !ma::is_none(it.value())) {
      a.secrets.push_back(it.value().is_string() ? it.value().get<std::string>()
                                                 : it.value().dump());
      if (it.key() == "api_key") a.api_key = a.secrets.back();
    }
    append_server_option(o, it.key(), it.value());
  }
  return a;
}

}  // namespace lmeval::api

// --model vllm's model_args and their server options (vllm_args.hpp).
#include "models/api/vllm_args.hpp"

#include <spdlog/spdlog.h>

#include "lmeval/core/error.hpp"
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
      engine_arg_info("prefix_token_id"),
      {"tensor_parallel_size", T::Int, "`1`", "1 or more", "--tensor-parallel-size"},
      {"quantization", T::Text, "", "", "--quantization"},
      engine_arg_info("max_gen_toks"),
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
      engine_arg_info("think_end_token"),
      {"truncation_side", T::Text, "`left`", "left, right, middle",
       "Which side of a too-long context is cut"},
      engine_arg_info("num_concurrent"),
      engine_arg_info("server_timeout"),
      {"(any other key)", T::Text, "", "", "Passed to the server as --key-with-dashes VALUE"},
  };
  return infos;
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
  if (given("truncation_side")) {
    a.truncation_side = text("truncation_side");
    if (a.truncation_side != "left" && a.truncation_side != "right" &&
        a.truncation_side != "middle")
      throw UserError("model_args truncation_side=" + a.truncation_side + " is not a side",
                      {"", 0, 0, "--model_args truncation_side"}, "left, right or middle");
  }
  parse_engine_args(args, a);
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
  auto option = [&](const std::string& k, const Json& v) {
    append_server_option(o, k, v, FalseFlag::kNoPrefix);
  };
  option("revision", given("revision") ? args["revision"] : Json());
  option("dtype", given("dtype") ? args["dtype"] : Json("auto"));
  if (given("tokenizer")) option("tokenizer", args["tokenizer"]);
  option("tokenizer_mode", given("tokenizer_mode") ? args["tokenizer_mode"] : Json("auto"));
  if (given("tokenizer_revision")) option("tokenizer_revision", args["tokenizer_revision"]);
  if (given("trust_remote_code") && ma::as_bool(args["trust_remote_code"], "trust_remote_code"))
    o.emplace_back("--trust-remote-code");
  option("tensor_parallel_size", Json(a.tensor_parallel_size));
  if (a.max_length) option("max_model_len", Json(*a.max_length));
  if (given("max_num_seqs"))
    option("max_num_seqs", args["max_num_seqs"]);
  else if (given("max_batch_size"))
    option("max_num_seqs", args["max_batch_size"]);
  if (given("quantization")) option("quantization", args["quantization"]);
  option("seed", Json(given("seed") ? ma::as_int(args["seed"], "seed") : 1234));
  if (a.lora_local_path) o.emplace_back("--enable-lora");
  option("max_lora_rank",
         Json(given("max_lora_rank") ? ma::as_int(args["max_lora_rank"], "max_lora_rank") : 16));
  if (a.lora_local_path) {
    o.emplace_back("--lora-modules");
    o.push_back("finetuned=" + *a.lora_local_path);
  }
  static const std::vector<std::string> kTaken = {"pretrained",
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
  pass_other_args(args, kTaken, FalseFlag::kNoPrefix, a);
  return a;
}

}  // namespace lmeval::api

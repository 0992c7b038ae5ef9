// --model sglang's model_args and their server options (sglang_args.hpp).
#include "models/api/sglang_args.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "lmeval/core/error.hpp"
#include "lmeval/models/model_args.hpp"

namespace lmeval::api {

namespace ma = model_args;

const std::vector<ModelArgInfo>& sglang_arg_infos() {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"pretrained", T::Text, "(required)", "a model folder or Hub id", "The model (--model-path)"},
      {"batch_size", T::Text, "`1`", "N or auto", "Accepted; every request is in flight at once"},
      {"max_batch_size", T::Int, "", "", "Accepted; no effect (as in the reference)"},
      {"max_model_len", T::Int, "the server's context length", "2 or more",
       "Context length lm-eval truncates to (not passed to the server, as in the reference)"},
      engine_arg_info("max_gen_toks"),
      {"add_bos_token", T::Bool, "`False` (`True` for a pretrained named *gemma*)", "",
       "Encode with the tokenizer's special tokens"},
      {"tokenizer_path", T::Text, "pretrained", "",
       "--tokenizer-path; also lm-eval's own tokenizer"},
      {"tokenizer_mode", T::Text, "`auto`", "", "--tokenizer-mode"},
      {"load_format", T::Text, "`auto`", "", "--load-format"},
      {"trust_remote_code", T::Bool, "`True`", "", "--trust-remote-code when True"},
      {"dtype", T::Text, "`auto`", "", "--dtype"},
      {"kv_cache_dtype", T::Text, "`auto`", "", "--kv-cache-dtype"},
      {"context_length", T::Int, "the server's context length", "2 or more",
       "Same as max_model_len (not passed to the server, as in the reference)"},
      {"device", T::Text, "`cuda`", "cuda, cuda:N", "--device (SGLangLM: CUDA only)"},
      {"chunked_prefill_size", T::Int, "`-1`", "", "--chunked-prefill-size"},
      {"mem_fraction_static", T::Number, "", "", "--mem-fraction-static"},
      {"dp_size", T::Int, "`1`", "1 or more", "--dp-size (SGLang's own data parallelism)"},
      {"tp_size", T::Int, "`1`", "1 or more", "--tp-size"},
      engine_arg_info("prefix_token_id"),
      engine_arg_info("think_end_token"),
      engine_arg_info("num_concurrent"),
      engine_arg_info("server_timeout"),
      {"(any other key)", T::Text, "", "",
       "Passed to the server as --key-with-dashes VALUE (True: the bare flag; False: left out)"},
  };
  return infos;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

SglangArgs parse_sglang_args(const Json& model_args, const ModelOptions& options, bool notes) {
  const Json args = model_args.is_object() ? model_args : Json::object();
  auto given = [&](const char* k) { return args.contains(k) && !ma::is_none(args[k]); };
  auto text = [&](const char* k) { return ma::as_string(args[k]); };
  auto where = [](const std::string& k) { return SourceLocation{"", 0, 0, "--model_args " + k}; };
  SglangArgs a;
  if (!given("pretrained"))
    throw UserError("sglang needs pretrained", where("pretrained"),
                    "pretrained=<a model folder or Hub id>");
  a.pretrained = text("pretrained");
  const std::string device = given("device") ? text("device") : "cuda";
  // SGLangLM.__init__'s assertion.
  if (device.find("cuda") == std::string::npos)
    throw UserError("SGLang only supports CUDA (model_args device=" + device + ")", where("device"),
                    "cuda or cuda:N, or leave device out");
  if (given("context_length") && given("max_model_len"))
    throw UserError("Either context_length or max_model_len may be provided, but not both",
                    where("max_model_len"), "one of context_length, max_model_len");
  if (given("max_model_len"))
    a.max_length = ma::as_int_in_range(args["max_model_len"], "max_model_len", 2, INT32_MAX);
  if (given("context_length"))
    a.max_length = ma::as_int_in_range(args["context_length"], "context_length", 2, INT32_MAX);
  const int64_t tp =
      given("tp_size") ? ma::as_int_in_range(args["tp_size"], "tp_size", 1, 1024) : 1;
  const int64_t dp =
      given("dp_size") ? ma::as_int_in_range(args["dp_size"], "dp_size", 1, 1024) : 1;
  // SGLangLM: int(batch_size) unless it says auto.
  const std::string bs = options.batch_size    ? *options.batch_size
                         : given("batch_size") ? text("batch_size")
                                               : "1";
  if (bs.find("auto") == std::string::npos) {
    const bool digits = !bs.empty() && std::all_of(bs.begin(), bs.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (!digits)
      throw UserError(
          "batch_size '" + bs + "' is not a number",
          options.batch_size ? SourceLocation{"", 0, 0, "--batch_size"} : where("batch_size"),
          "N or auto");
  }
  if (given("max_batch_size")) (void)ma::as_int(args["max_batch_size"], "max_batch_size");
  if (given("add_bos_token")) a.add_bos_token = ma::as_bool(args["add_bos_token"], "add_bos_token");
  if (lower(a.pretrained).find("gemma") != std::string::npos) {
    a.add_bos_token = true;
    if (notes)
      spdlog::info(
          "Found 'gemma' in model name, a BOS token will be used as Gemma series models "
          "underperform without it.");
  }
  parse_engine_args(args, a);
  if (given("mem_fraction_static"))
    (void)ma::as_double(args["mem_fraction_static"], "mem_fraction_static");
  if (given("chunked_prefill_size"))
    (void)ma::as_int(args["chunked_prefill_size"], "chunked_prefill_size");
  a.tokenizer = given("tokenizer_path") ? text("tokenizer_path") : a.pretrained;
  if (notes && dp > 1)
    spdlog::warn(
        "Data parallelism will be deprecated in the future version of SGLang. See here: "
        "https://docs.sglang.ai/backend/server_arguments.html#data-parallelism .");

  // SGLangLM.__init__'s self.model_args in its order, then **kwargs as given. max_model_len and
  // context_length are SGLangLM's own: the engine keeps the model's context length.
  auto& o = a.server_options;
  auto option = [&](const std::string& k, const Json& v) {
    append_server_option(o, k, v, FalseFlag::kOmitted);
  };
  auto value_or = [&](const char* k, const Json& d) -> Json { return given(k) ? args[k] : d; };
  option("tokenizer_path", value_or("tokenizer_path", Json()));
  option("tokenizer_mode", value_or("tokenizer_mode", "auto"));
  option("load_format", value_or("load_format", "auto"));
  option("trust_remote_code", Json(given("trust_remote_code")
                                       ? ma::as_bool(args["trust_remote_code"], "trust_remote_code")
                                       : true));
  option("dtype", value_or("dtype", "auto"));
  option("kv_cache_dtype", value_or("kv_cache_dtype", "auto"));
  option("device", Json(device));
  option("mem_fraction_static", value_or("mem_fraction_static", Json()));
  option("tp_size", Json(tp));
  option("dp_size", Json(dp));
  option("chunked_prefill_size", value_or("chunked_prefill_size", Json(-1)));
  static const std::vector<std::string> kTaken = {
      "pretrained",          "batch_size",      "max_batch_size",
      "max_model_len",       "max_gen_toks",    "add_bos_token",
      "tokenizer_path",      "tokenizer_mode",  "load_format",
      "trust_remote_code",   "dtype",           "kv_cache_dtype",
      "context_length",      "device",          "chunked_prefill_size",
      "mem_fraction_static", "dp_size",         "tp_size",
      "prefix_token_id",     "think_end_token", "num_concurrent",
      "server_timeout"};
  pass_other_args(args, kTaken, FalseFlag::kOmitted, a);
  return a;
}

}  // namespace lmeval::api

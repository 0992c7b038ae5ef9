// The hf backend's model_args table (the reference's HFLM.__init__ arguments that lm-eval takes)
// and their parsing. Part of lm-eval itself, not of the plugin: `ls models`, `validate` and the
// docs read the table without loading libtorch.
#include "lmeval/models/hf/hf_args.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/models/hf/hf_model.hpp"

// Each entry names only the members it sets (designated initializers); GCC 12 would warn about
// every member left to its default. (Popped at the end: unity builds join files.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace lmeval::hf {

namespace {

namespace ma = model_args;

// Upper bound of integer model_args (token counts, batch sizes): what an int holds downstream.
constexpr int64_t kHfMaxIntArg = 2147483647;

void check_bool(const Json& v, const std::string& key) { (void)ma::as_bool(v, key); }

// A key only transformers applies: kept as given (a boolean checked) for from_pretrained, and the
// model then runs through transformers (models/hf/transformers_path.cpp).
ModelArg<HfArgs> to_transformers(const std::string& key, ModelArgType type, std::string doc) {
  ModelArgInfo info{.key = key, .type = type, .doc = std::move(doc)};
  return {std::move(info), true, [key, type](HfArgs& a, const Json& v) {
            if (type == ModelArgType::Bool)
              a.transformers_kwargs[key] = ma::as_bool(v, key);
            else
              a.transformers_kwargs[key] = v;  // a number stays one (max_memory_per_gpu=1000)
          }};
}

ModelArgTable<HfArgs> make_hf_table() {
  using ma::boolean;
  using ma::integer;
  using ma::none_is_a_value;
  using ma::text;
  const std::string kInt = "1 to " + std::to_string(kHfMaxIntArg);
  ModelArgTable<HfArgs> t = {
      none_is_a_value(
          text(&HfArgs::pretrained,
               {.key = "pretrained",
                .default_value = "(required)",
                .accepted = "a model folder or a Hub repo id",
                .doc = "The model: a Hugging Face model folder (safetensors or pytorch_model.bin "
                       "weights) or a Hub repo id"})),
      none_is_a_value(ModelArg<HfArgs>{
          {.key = "backend",
           .default_value = "`default`",
           .accepted = "default, causal, seq2seq",
           .doc = "Model kind: decoder-only (causal) or encoder-decoder (seq2seq); "
                  "default: seq2seq when config.json's model_type is one"},
          true,
          [](HfArgs& a, const Json& v) {
            const std::string b = ma::as_string(v);
            if (b != "default" && b != "causal" && b != "seq2seq")
              throw UserError("backend=" + b + " is not supported",
                              {"", 0, 0, "--model_args backend"}, "default, causal or seq2seq");
            a.backend = b;
          }}),
      none_is_a_value(text(&HfArgs::revision, {.key = "revision",
                                               .default_value = "`main`",
                                               .doc = "Hub revision (branch, tag or commit)"})),
      text(&HfArgs::subfolder,
           {.key = "subfolder",
            .default_value = "`\"\"`",
            .doc = "Folder inside pretrained (a folder or a Hub repo) that holds the model and "
                   "its tokenizer (inside tokenizer too when that is given, as HFLM passes it)"}),
      text(
          &HfArgs::tokenizer,
          {.key = "tokenizer", .default_value = "pretrained", .doc = "Tokenizer folder or Hub id"}),
      text(&HfArgs::gguf_file,
           {.key = "gguf_file",
            .accepted = "a GGUF file in the pretrained folder (llama, qwen2, qwen2moe, qwen3, "
                        "qwen3moe, phi3, gemma2, gemma3, stablelm, starcoder2, gpt2, falcon, "
                        "bloom)",
            .doc = "Load the model from this GGUF file, dequantised as transformers' GGUF loader "
                   "does (the tokenizer from tokenizer= or else from the file's metadata)"}),
      integer(&HfArgs::max_length, 1, kHfMaxIntArg,
              {.key = "max_length",
               .default_value = "config's max_position_embeddings (n_positions for GPT-2; "
                                "absent: transformers' default for the architecture)",
               .accepted = kInt,
               .doc = "Context length in tokens"}),
      none_is_a_value(text(&HfArgs::device, {.key = "device",
                                             .default_value = "cuda when available, else cpu",
                                             .accepted = "cpu, cuda, cuda:N",
                                             .doc = "Device; --device wins when given"})),
      none_is_a_value(
          text(&HfArgs::dtype, {.key = "dtype",
                                .default_value = "`auto`",
                                .accepted = "auto, float32, float16, bfloat16, float64",
                                .doc = "Weight dtype (auto: the checkpoint's torch_dtype)"})),
      text(&HfArgs::softmax_dtype,
           {.key = "softmax_dtype",
            .default_value = "the logits' dtype (float64 for float64 weights)",
            .accepted = "float32, float16, bfloat16, float64",
            .doc = "Dtype of the log-softmax over the logits"}),
      none_is_a_value(
          text(&HfArgs::batch_size, {.key = "batch_size",
                                     .default_value = "--batch_size",
                                     .accepted = "N (" + kInt + "), auto, auto:N",
                                     .doc = "Batch size; --batch_size wins when given"})),
      none_is_a_value(integer(&HfArgs::max_batch_size, 1, kHfMaxIntArg,
                              {.key = "max_batch_size",
                               .default_value = "`64`",
                               .accepted = kInt,
                               .doc = "Upper bound of the automatic batch size"})),
      boolean(&HfArgs::add_bos_token, {.key = "add_bos_token",
                                       .default_value = "the tokenizer's own rule",
                                       .doc = "Add the BOS token when encoding (True/False)"}),
      integer(&HfArgs::prefix_token_id, 0, kHfMaxIntArg,
              {.key = "prefix_token_id",
               .default_value = "BOS, else EOS",
               .accepted = "0 to " + std::to_string(kHfMaxIntArg),
               .doc = "Token scored before an empty context"}),
      none_is_a_value(boolean(&HfArgs::logits_cache,
                              {.key = "logits_cache",
                               .default_value = "`True`",
                               .doc = "Reuse one forward pass for one-token continuations"})),
      none_is_a_value(ma::accepted<HfArgs>({.key = "truncation",
                                            .type = ModelArgType::Bool,
                                            .default_value = "`False`",
                                            .doc = "Accepted; no effect"},
                                           [](const Json& v) { check_bool(v, "truncation"); })),
      none_is_a_value(boolean(&HfArgs::trust_remote_code,
                              {.key = "trust_remote_code",
                               .default_value = "`False`",
                               .doc = "Run the model folder's own code (config.json's auto_map) "
                                      "through transformers; also --trust_remote_code"})),
      none_is_a_value(boolean(&HfArgs::use_fast_tokenizer,
                              {.key = "use_fast_tokenizer",
                               .default_value = "`True`",
                               .doc = "Accepted; no effect (lm-eval reads tokenizer.json or "
                                      "tokenizer.model itself)"})),
      text(&HfArgs::think_end_token,
           {.key = "think_end_token",
            .accepted = "a string, or a token id",
            .doc = "Generations keep only what follows its last occurrence"}),
      none_is_a_value(boolean(&HfArgs::parallelize,
                              {.key = "parallelize",
                               .default_value = "`False`",
                               .doc = "Split the model over the GPUs (device_map=auto) through "
                                      "transformers"})),
      to_transformers("max_memory_per_gpu", ModelArgType::Text,
                      "Memory per GPU with parallelize=True (transformers)"),
      to_transformers("max_cpu_memory", ModelArgType::Text,
                      "CPU memory for offloading with parallelize=True (transformers)"),
      to_transformers("offload_folder", ModelArgType::Text,
                      "Disk offload folder with parallelize=True (transformers)"),
      to_transformers("device_map", ModelArgType::Text,
                      "from_pretrained's device_map with parallelize=True (transformers)"),
      to_transformers("load_in_4bit", ModelArgType::Bool,
                      "bitsandbytes 4-bit loading (transformers, bitsandbytes)"),
      to_transformers("load_in_8bit", ModelArgType::Bool,
                      "bitsandbytes 8-bit loading (transformers, bitsandbytes)"),
      to_transformers("bnb_4bit_compute_dtype", ModelArgType::Text,
                      "bitsandbytes 4-bit compute dtype (transformers)"),
      to_transformers("bnb_4bit_quant_type", ModelArgType::Text,
                      "bitsandbytes 4-bit quantisation type (transformers)"),
      to_transformers("bnb_4bit_use_double_quant", ModelArgType::Bool,
                      "bitsandbytes nested quantisation (transformers)"),
      to_transformers("attn_implementation", ModelArgType::Text,
                      "from_pretrained's attention implementation: eager, sdpa, ... "
                      "(transformers)"),
      ModelArg<HfArgs>{{.key = "peft",
                        .accepted = "a PEFT adapter folder or Hub repo id",
                        .doc = "PEFT adapter: LoRA (DoRA included), IA3, LoHa and LoKr "
                               "merged into the weights at load as peft computes them, other "
                               "types applied by peft through transformers (same revision as "
                               "pretrained); "
                               "peft=a,b or peft=[a,b]: one run and one results file per adapter, "
                               "the base loaded once"},
                       true,
                       [](HfArgs& a, const Json& v) {
                         // A list was split into one run per adapter before the model
                         // (config/adapter_runs.hpp); one reaching here is a caller's misuse.
                         if (v.is_array())
                           throw UserError("a list of adapters reached one model",
                                           {"", 0, 0, "--model_args peft"},
                                           "one adapter folder or Hub repo id per run");
                         a.peft = ma::as_string(v);
                       }},
      text(&HfArgs::delta,
           {.key = "delta",
            .accepted = "a model folder or Hub repo id",
            .doc = "Delta weights added to pretrained's, tensor by tensor (same revision as "
                   "pretrained)"}),
      none_is_a_value(integer(&HfArgs::threads, 0, 4096,
                              {.key = "threads",
                               .default_value = "`0`",
                               .accepted = "0 to 4096",
                               .doc = "CPU threads (0: libtorch's default); lm-eval's own"})),
  };
  return t;
}

}  // namespace

const ModelArgTable<HfArgs>& hf_model_args() {
  static const ModelArgTable<HfArgs> table = make_hf_table();
  return table;
}

bool only_with_parallelize(const std::string& key) {
  return key == "max_memory_per_gpu" || key == "max_cpu_memory" || key == "offload_folder" ||
         key == "device_map";
}

HfArgs parse_hf_args(const Json& model_args, const ModelOptions& options) {
  HfArgs a;
  if (!model_args.is_null() && !model_args.is_object())
    throw UserError("model_args must be key=value pairs", {"", 0, 0, "--model_args"},
                    "pretrained=PATH,...");
  ma::check_known(model_args, "hf", hf_model_known_args());
  ma::apply(hf_model_args(), model_args, a, ModelArgOrder::AsGiven);
  if (!model_args.contains("pretrained") || a.pretrained.empty())
    throw UserError("model hf needs model_args pretrained=PATH",
                    {"", 0, 0, "--model_args pretrained"},
                    "pretrained=<local Hugging Face model folder>");
  // HFLM._create_model raises ValueError for both.
  if (!a.peft.empty() && !a.delta.empty())
    throw UserError("Cannot use both 'peft' and 'delta' options at the same time.",
                    {"", 0, 0, "--model_args peft"}, "peft=ADAPTER or delta=DELTA, not both");
  if (options.batch_size) a.batch_size = *options.batch_size;
  if (options.max_batch_size) a.max_batch_size = *options.max_batch_size;
  // --device is passed only when given (then it wins, as the plugin loader decides); otherwise a
  // device in model_args is the one used and named.
  if (options.device) a.device = *options.device;
  if (options.seed) a.seed = *options.seed;
  if (a.max_batch_size <= 0) a.max_batch_size = 64;
  // Validate batch_size: N | auto | auto:N.
  if (!a.batch_size.empty())
    check_batch_size(a.batch_size, options.batch_size ? "--batch_size" : "--model_args batch_size");
  return a;
}

}  // namespace lmeval::hf

namespace lmeval {

const std::vector<std::string>& hf_model_known_args() {
  static const std::vector<std::string> keys = model_args::keys(hf::hf_model_args());
  return keys;
}

}  // namespace lmeval

#pragma GCC diagnostic pop

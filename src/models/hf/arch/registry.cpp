// The registry of architectures and the part of config.json every architecture shares.
#include <algorithm>

#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/checkpoint.hpp"
#include "models/hf/json_file.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

// The architectures, each defined by its own file (arch/<model_type>.cpp).
extern const ArchSpec kLlama, kMistral, kQwen2, kQwen3, kGptNeoX, kGpt2, kPhi, kPhi3, kGemma,
    kGemma2, kOpt, kGranite, kSmolLM3, kOlmo2, kStarcoder2, kMixtral, kQwen2Moe, kQwen3Moe, kOlmoe,
    kGemma3, kOlmo3, kGptJ, kCohere, kStableLm, kCohere2, kExaone4, kGlm4, kErnie4_5, kFalcon,
    kGptBigCode, kDeepseekV2, kDeepseekV3, kLlama4, kBloom, kMpt, kGptOss;

const std::vector<const ArchSpec*>& arch_registry() {
  // clang-format off
  static const std::vector<const ArchSpec*> specs = {
      &kLlama,
      &kMistral,
      &kQwen2,
      &kQwen3,
      &kGptNeoX,
      &kGpt2,
      &kPhi,
      &kPhi3,
      &kGemma,
      &kGemma2,
      &kOpt,
      &kGranite,
      &kSmolLM3,
      &kOlmo2,
      &kStarcoder2,
      &kMixtral,
      &kQwen2Moe,
      &kQwen3Moe,
      &kOlmoe,
      &kGemma3,
      &kOlmo3,
      &kGptJ,
      &kCohere,
      &kStableLm,
      &kCohere2,
      &kExaone4,
      &kGlm4,
      &kErnie4_5,
      &kFalcon,
      &kGptBigCode,
      &kDeepseekV2,
      &kDeepseekV3,
      &kLlama4,
      &kBloom,
      &kMpt,
      &kGptOss,
  };
  // clang-format on
  return specs;
}

const ArchSpec* find_arch(const std::string& architecture) {
  for (const ArchSpec* s : arch_registry())
    if (architecture == s->architecture) return s;
  return nullptr;
}

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ArchSpec* s : arch_registry()) out.emplace_back(s->architecture);
    return out;
  }();
  return names;
}

ArchConfig parse_arch_config(const Json& j, const std::string& path) {
  if (!j.is_object())
    throw UserError("config.json is not an object", {path, 0, 0, ""}, "a JSON object");
  ConfigReader c(j, path);
  ArchConfig a;
  std::string arch;
  if (c.has("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    arch = j["architectures"][0].get<std::string>();
  const ArchSpec* spec = find_arch(arch);
  if (!spec) {
    std::string list;
    for (const auto& s : supported_architectures()) list += (list.empty() ? "" : ", ") + s;
    // HFLM sends such a model through transformers (transformers_path.cpp) before this point;
    // what reaches here loads the native Transformer directly (tests, tools).
    throw UserError("architecture '" + arch +
                        "' has no native implementation in lm-eval's hf backend; `--model hf` "
                        "runs it through transformers in the active Python environment "
                        "(docs/models.md)",
                    {path, 0, 0, "$.architectures"}, "one of " + list);
  }
  a.architecture = arch;
  a.model_type = c.str_or("model_type", "");
  // transformers' Auto classes build the model of model_type, not of architectures, and raise for
  // a model_type they do not know: a model_type other than the architecture's would be another
  // model (or none) there, so it is refused rather than run as `arch`. Absent, arch decides.
  if (!a.model_type.empty() && a.model_type != spec->model_type)
    throw UserError("model_type '" + a.model_type + "' is not the model_type of " + arch,
                    {path, 0, 0, "$.model_type"},
                    std::string("'") + spec->model_type + "' (or no model_type)");
  a.vocab_size = c.size_("vocab_size");
  // PretrainedConfig keeps `dtype` over the older `torch_dtype` and turns the name into
  // getattr(torch, name) when the config is read, so a name torch lacks fails whatever dtype
  // the model is then loaded in (AttributeError: module 'torch' has no attribute ...).
  const std::string dtype_key = c.has("dtype") ? "dtype" : "torch_dtype";
  a.torch_dtype = c.str_or(dtype_key, "");
  if (c.has(dtype_key) && !is_torch_dtype_name(a.torch_dtype))
    throw UserError("'" + a.torch_dtype + "' is not a torch dtype", {path, 0, 0, "$." + dtype_key},
                    "a torch dtype name such as float32, bfloat16 or float16");
  a.bos_token_id = c.opt_int("bos_token_id");
  a.eos_token_id = c.opt_int("eos_token_id");
  a.pad_token_id = c.opt_int("pad_token_id");

  spec->parse(c, a);
  if (a.rope != RopeType::kNone &&
      (a.rotary_dim <= 0 || a.rotary_dim % 2 != 0 || a.rotary_dim > a.head_dim))
    throw UserError("rotary dimension " + std::to_string(a.rotary_dim) + " is invalid",
                    {path, 0, 0, "$.partial_rotary_factor"}, "an even number of dims ≤ head_dim");
  return a;
}

ArchConfig load_arch_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::exists(dir))
    throw UserError("model folder does not exist", {dir.string(), 0, 0, "pretrained"},
                    "a local Hugging Face model folder (config.json + model.safetensors)");
  if (!fs::exists(p))
    throw UserError("model folder has no config.json", {p.string(), 0, 0, ""},
                    "a Hugging Face model folder with config.json");
  return parse_arch_config(load_json_file(p, "config.json"), p.string());
}

}  // namespace lmeval::hf

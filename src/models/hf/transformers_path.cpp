// The choice between the native path and transformers (transformers_path.hpp).
#include "models/hf/transformers_path.hpp"

#include "lmeval/core/log.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/json_file.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

std::optional<std::string> transformers_path_reason(const HfArgs& args, const fs::path& dir) {
  if (args.parallelize) return "parallelize=True (the model split over the GPUs)";
  for (const auto& [key, value] : args.transformers_kwargs.items()) {
    if (!only_with_parallelize(key)) {
      if (value.is_boolean() && !value.get<bool>()) continue;  // load_in_4bit=False changes nothing
      return key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()) +
             " (a from_pretrained setting lm-eval does not apply itself)";
    }
  }
  for (const auto& [key, value] : args.transformers_kwargs.items())
    if (only_with_parallelize(key))
      // HFLM._get_accelerate_args reads them only with parallelize=True.
      log::warn("hf: --model_args " + key + " has no effect without parallelize=True (as in the "
                "reference)");
  const fs::path config = dir / "config.json";
  if (!fs::exists(config)) return std::nullopt;  // the native loader says what is missing
  const Json j = load_json_file(config, "config.json");
  if (!j.is_object()) return std::nullopt;
  if (args.trust_remote_code && j.contains("auto_map") && j["auto_map"].is_object() &&
      j["auto_map"].contains("AutoModelForCausalLM"))
    return "trust_remote_code=True and config.json's auto_map names the folder's own model code (" +
           j["auto_map"]["AutoModelForCausalLM"].dump() + ")";
  if (j.contains("quantization_config") && j["quantization_config"].is_object()) {
    const Json& q = j["quantization_config"];
    const std::string method =
        q.contains("quant_method") && q["quant_method"].is_string() ? q["quant_method"].get<std::string>()
                                                                    : "unnamed";
    return "config.json's quantization_config (" + method +
           ") has no native path: transformers dequantises it";
  }
  std::string arch;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    arch = j["architectures"][0].get<std::string>();
  if (!find_arch(arch))
    return "architecture '" + (arch.empty() ? std::string("(none in config.json)") : arch) +
           "' has no native implementation in lm-eval";
  return std::nullopt;
}

}  // namespace lmeval::hf

// Which PEFT adapters lm-eval merges itself (src/models/hf/lora.cpp) and which need peft
// (transformers_path.hpp).
#include <exception>

#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/models/hf/transformers_path.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

std::optional<std::string> adapter_config_reason(const Json& j) {
  if (!j.is_object() || !j.contains("peft_type") || !j["peft_type"].is_string())
    return std::nullopt;  // the native loader names the field
  auto set = [&](const char* k) {
    if (!j.contains(k) || j[k].is_null()) return false;
    const Json& v = j[k];
    return !(v.is_boolean() && !v.get<bool>()) && !(v.is_array() && v.empty()) &&
           !(v.is_object() && v.empty());
  };
  const std::string type = j["peft_type"].get<std::string>();
  if (type == "IA3" || type == "LOHA" || type == "LOKR") return std::nullopt;
  if (type != "LORA")
    return "peft_type " + type +
           " (lm-eval merges LORA, DoRA included, IA3, LOHA and LOKR adapters itself)";
  // LoRA variants and layer surgery that compute more than (m / ‖W + s·B·A‖) · (W + s·B·A).
  for (const char* k :
       {"use_qalora", "use_bdlora", "velora_config", "monteclora_config", "arrow_config",
        "kasa_config", "alora_invocation_tokens", "layer_replication", "trainable_token_indices",
        "megatron_config", "target_parameters"})
    if (set(k)) return std::string(k) + " set (a LoRA variant lm-eval does not merge)";
  // DoRA scales lora_B's bias with the magnitude: not a bias lm-eval can add on its own.
  if (set("use_dora") && set("lora_bias"))
    return "use_dora with lora_bias (a LoRA variant lm-eval does not merge)";
  return std::nullopt;
}

std::optional<std::string> adapter_reason(const fs::path& dir) {
  const fs::path p = dir / "adapter_config.json";
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  try {
    const std::string text = read_input_file(p, "adapter_config.json", "a JSON object");
    require_json_nesting(text, p.string());
    return adapter_config_reason(Json::parse(text));
  } catch (const std::exception&) {
    return std::nullopt;  // the native loader names what is wrong with it
  }
}

}  // namespace lmeval::hf

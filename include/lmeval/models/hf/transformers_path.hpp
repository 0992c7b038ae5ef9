// Whether an hf model runs natively or through transformers in the embedded Python, and why.
// Torch-free: lm-eval decides before it opens a plugin (hf_plugin.cpp), since transformers' own
// libtorch and the native plugin's cannot share a process.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/hf/hf_args.hpp"

namespace lmeval::hf {

// Why the model in `dir` (its config.json, or with gguf_file the GGUF file in it) with these
// model_args needs transformers itself: an architecture lm-eval lacks, the folder's own code under
// trust_remote_code=True, a quantisation method, a from_pretrained setting only transformers
// applies, or a peft= adapter lm-eval does not merge (adapter_reason). nullopt: it runs natively.
std::optional<std::string> transformers_path_reason(const HfArgs& args,
                                                    const std::filesystem::path& dir);

// Why transformers, not lm-eval, dequantises a checkpoint with this config.json
// quantization_config (for a natively run architecture `arch`): the method and format named, or
// nullopt when the native loader reads it (src/models/hf/quant_weights.cpp) or when no one knows
// the method (the native loader then names the field).
std::optional<std::string> quantization_reason(const Json& quantization_config,
                                               const std::string& arch);

// Why the PEFT adapter in `dir` needs peft itself (HFLM's PeftModel.from_pretrained): a peft_type
// other than LORA, IA3, LOHA and LOKR, or a LoRA option lm-eval does not merge
// (src/models/hf/lora.cpp merges them, DoRA included). nullopt when lm-eval merges it, or when its
// adapter_config.json is absent or unreadable (the native loader then names what is wrong).
std::optional<std::string> adapter_reason(const std::filesystem::path& dir);
// The same from an adapter_config.json already read.
std::optional<std::string> adapter_config_reason(const Json& adapter_config);

// A GGUF file's general.architecture (src/models/hf_gguf_header.cpp), read without the plugin;
// nullopt when the file cannot be read so (the native loader then names what is wrong).
std::optional<std::string> gguf_architecture(const std::filesystem::path& file);
// Whether a GGUF of this general.architecture runs through transformers: its GGUF loader reads
// it and lm-eval has no native implementation of the architecture.
bool gguf_runs_through_transformers(const std::string& gguf_arch);

// The architectures (config.json's architectures[0]) the native plugin runs: its registry
// (arch/registry.cpp) as CMake reads it from the sources, so lm-eval knows them without opening
// the plugin (a test checks the two agree).
const std::vector<std::string>& native_architecture_names();

}  // namespace lmeval::hf

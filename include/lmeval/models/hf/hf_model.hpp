// The `hf` model backend (libtorch): Hugging Face model folders scored like the reference's HFLM.
// Torch-free header. The backend itself is a plugin (liblmeval_hf_cpu.so, liblmeval_hf_cuda.so)
// that lm-eval loads with dlopen only when an hf model is built, so commands that need no model
// never load libtorch.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/models/lm.hpp"

namespace lmeval {

// Registers `hf` with aliases `hf-auto` and `huggingface`; its factory loads the plugin.
void register_hf_model(ModelRegistry& registry);

// The model_args keys `hf` accepts.
const std::vector<std::string>& hf_model_known_args();

// Builds an hf model in this process (code linked with the hf library: tests, tools).
std::unique_ptr<LM> make_hf_model(const Json& model_args, const ModelOptions& options);

// Where plugins are looked for: $LMEVAL_PLUGIN_DIR when set, else the running binary's folder
// (build/), else ../lib/lm-eval beside it (an installed lm-eval).
std::filesystem::path hf_plugin_dir();

// Loads the plugin the device asks for (cuda or cuda:N: the CUDA one; cpu: the CPU one; unset:
// the CUDA one when built, else the CPU one) and builds the model with it. A missing or broken
// plugin is a UserError saying how to build it.
std::unique_ptr<LM> load_hf_model(const Json& model_args, const ModelOptions& options);

// Bumped whenever the classes passed between lm-eval and the plugin change layout.
inline constexpr int kHfPluginAbi = 2;

}  // namespace lmeval

// The plugin's C entry points, found with dlsym.
extern "C" {
// "<project version>/<kHfPluginAbi>": the loader refuses a plugin built from other sources.
const char* lmeval_hf_plugin_abi();
// A new model; throws lmeval::UserError/RuntimeError like make_hf_model.
lmeval::LM* lmeval_hf_plugin_create(const lmeval::Json& model_args,
                                    const lmeval::ModelOptions& options);
}

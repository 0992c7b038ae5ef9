// liblmeval_hf_transformers.so: HFLM over PythonModel only, without libtorch (transformers' own
// libtorch, imported by the embedded Python, cannot share a process with the native plugin's).
// lm-eval opens it instead of liblmeval_hf_{cpu,cuda}.so when a model needs transformers
// (hf_plugin.cpp, transformers_path.hpp). What the native path would need is absent here.
#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/causal_model.hpp"
#include "models/hf/seq2seq_lm.hpp"

namespace lmeval::hf {

std::unique_ptr<CausalModel> load_native_model(const std::filesystem::path& dir,
                                               const LoadOptions&) {
  throw RuntimeError("the transformers plugin cannot run " + dir.string() +
                     " natively (lm-eval chose the transformers path for it)");
}

// No native registry here: HFLM asks it only for a native architecture's config-class defaults,
// and the checkpoint reader for the native weights' description.
const ArchSpec* find_arch(const std::string&) { return nullptr; }

// The transformers path refuses encoder-decoders before this plugin opens (transformers_path.cpp).
std::unique_ptr<LM> make_seq2seq_model(const HfArgs&, const std::filesystem::path&) {
  return nullptr;
}

ArchConfig load_arch_config(const std::filesystem::path& dir) {
  throw RuntimeError("the transformers plugin has no native architectures (" + dir.string() + ")");
}

}  // namespace lmeval::hf

extern "C" const char* lmeval_hf_plugin_abi() {
  static const std::string abi =
      std::string(LMEVAL_VERSION_STRING) + "/" + std::to_string(lmeval::kHfPluginAbi);
  return abi.c_str();
}

extern "C" lmeval::LM* lmeval_hf_plugin_create(const lmeval::Json& model_args,
                                               const lmeval::ModelOptions& options) {
  return lmeval::make_hf_model(model_args, options).release();
}

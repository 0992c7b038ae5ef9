// The native path's model (causal_model.hpp), kept out of hf_lm.cpp so that the transformers
// plugin, which has no libtorch, builds HFLM without it.
#include "models/hf/causal_model.hpp"

namespace lmeval::hf {

std::unique_ptr<CausalModel> load_native_model(const std::filesystem::path& dir,
                                               const LoadOptions& options) {
  return std::make_unique<NativeModel>(Transformer::load(dir, options));
}

}  // namespace lmeval::hf

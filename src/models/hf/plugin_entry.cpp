// The plugin's C entry points (liblmeval_hf_{cpu,cuda}.so), called by src/models/hf_plugin.cpp.
#include "lmeval/models/hf/hf_model.hpp"

#include <string>

extern "C" const char* lmeval_hf_plugin_abi() {
  static const std::string abi =
      std::string(LMEVAL_VERSION_STRING) + "/" + std::to_string(lmeval::kHfPluginAbi);
  return abi.c_str();
}

extern "C" lmeval::LM* lmeval_hf_plugin_create(const lmeval::Json& model_args,
                                               const lmeval::ModelOptions& options) {
  return lmeval::make_hf_model(model_args, options).release();
}

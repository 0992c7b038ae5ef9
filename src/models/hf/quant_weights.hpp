// Pre-quantised checkpoints read natively (issue 29 point 5): config.json's quantization_config
// says how the linear layers' weights were packed (GPTQ, AWQ, FP8, compressed-tensors,
// bitsandbytes 4-bit and 8-bit) and each
// such weight is served as float32, dequantised as the package that reads the format does on the
// CPU (quant_formats.hpp), so the architectures see an ordinary "<module>.weight". No torch.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

class WeightFiles;

class QuantizedWeights {
 public:
  // nullptr when config.json has no quantization_config or one an architecture dequantises
  // itself (GPT-OSS's mxfp4). Throws UserError naming config.json and the field for a bad or
  // unknown configuration, and naming the weights file and tensor for a missing companion tensor
  // or a shape that does not fit the configuration: all checked here, before any forward pass.
  // `dtype` is the run's dtype= ("auto": config.json's): transformers' FP8 dequantisation
  // rounds its float32 products to it.
  static std::unique_ptr<QuantizedWeights> open(const std::filesystem::path& model_dir,
                                                const WeightFiles& files,
                                                const std::string& dtype = "auto");
  ~QuantizedWeights();

  // The quant_method ("gptq", "awq", "fp8", "compressed-tensors", "bitsandbytes").
  const std::string& method() const { return method_; }
  // The float32 weight of a quantised module (one `serves`), owning its values; an empty view
  // (data == nullptr) for another name.
  TensorView dequantised(const std::string& name) const;
  // The checkpoint's names as the model sees them: the packed tensors' replaced by the weights.
  std::vector<std::string> names(const std::vector<std::string>& stored) const;
  bool serves(const std::string& name) const { return modules_.count(name) != 0; }
  bool hides(const std::string& name) const { return hidden_.count(name) != 0; }

  struct Module;

 private:
  QuantizedWeights();
  std::string method_;
  // The model's dtype, which transformers casts FP8 products to.
  std::string model_round_ = "F32";
  std::map<std::string, std::unique_ptr<Module>> modules_;  // by "<module>.weight"
  std::set<std::string> hidden_;                            // packed tensors and their scales
};

}  // namespace lmeval::hf

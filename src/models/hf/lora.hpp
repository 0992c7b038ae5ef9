// PEFT LoRA adapters (adapter_config.json with adapter_model.safetensors or adapter_model.bin) as
// edits of the base model's tensors: what peft's LoraModel adds to each targeted layer, merged
// into its weight at load. No torch here.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/hf/weight_edits.hpp"
#include "models/hf/weight_files.hpp"

namespace lmeval::hf {

// What an adapter is applied to.
struct LoraBase {
  const WeightFiles* weights = nullptr;  // the base checkpoint's tensors
  std::string architecture;              // GPT2LMHeadModel: its Conv1D layers store [in, out]
  bool tied_embeddings = false;          // lm_head shares the input embedding's tensor
};

class LoraAdapter {
 public:
  // Reads `dir`'s adapter_config.json and weights, checks them against `base` and appends their
  // edits to `edits` (base tensor name -> edits in order). A bad adapter, or one that does not
  // fit the base (another base model, a module the base lacks, other shapes or ranks), is a
  // UserError naming the file and the module.
  static std::unique_ptr<LoraAdapter> open(const std::filesystem::path& dir, const LoraBase& base,
                                           std::map<std::string, std::vector<TensorEdit>>& edits);

 private:
  std::unique_ptr<WeightFiles> files_;  // the edits point into these tensors
};

}  // namespace lmeval::hf

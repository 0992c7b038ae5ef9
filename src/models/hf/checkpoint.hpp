// Torch-free reading of a Hugging Face model folder: memory-mapped safetensors and config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "models/hf/arch/arch_config.hpp"

namespace lmeval::hf {

// One tensor of a safetensors file, pointing into the mapped file.
struct TensorView {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
  size_t nbytes = 0;
  std::string file;  // for messages
  // Set when the bytes are the view's own rather than a mapped file's (a strided tensor of a
  // PyTorch checkpoint made contiguous, a tensor merged with an adapter or a delta).
  std::shared_ptr<const void> owner;
};

size_t safetensors_dtype_size(const std::string& dtype);  // 0 when unknown

// A read-only mapping of one safetensors file with a validated header.
class SafetensorsFile {
 public:
  // Throws UserError naming the file for a missing, truncated or inconsistent file.
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::filesystem::path& path() const { return path_; }
  // Tells the kernel the pages of a tensor already converted are not needed any more.
  void release(const TensorView& t) const;

 private:
  std::filesystem::path path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  std::map<std::string, TensorView> tensors_;
};

// What joins a model folder's own weights (HFLM's peft= and delta=, which exclude each other).
struct WeightSources {
  std::filesystem::path peft;   // a PEFT LoRA adapter folder, merged into the weights
  std::filesystem::path delta;  // a model folder whose tensors are added, tensor by tensor
  // A GGUF file read in place of the folder's config.json and weights (gguf_model.hpp).
  std::filesystem::path gguf;
  // The run's dtype=: HFLM loads the model and the delta in it and adds in it.
  std::string dtype = "auto";
};

class WeightFiles;
class LoraAdapter;
class QuantizedWeights;
struct TensorEdit;

// All weights of a model: its folder's weight files (weight_files.hpp), pre-quantised ones
// dequantised (quant_weights.hpp), with an adapter or a delta applied to each tensor as it is
// asked for.
class WeightArchive {
 public:
  // Throws UserError when the folder has no weights, or for a bad adapter or delta.
  static std::unique_ptr<WeightArchive> open(const std::filesystem::path& model_dir,
                                             const WeightSources& sources = {});
  ~WeightArchive();

  // An edited tensor is computed here, and owned by the archive until released.
  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  void release(const TensorView& t) const;

  // Several adapters over one base (peft=a,b): the edits of the adapter `peft` in place of the
  // present adapter's, the base's files left open. check_adapter reads and checks one as
  // switch_adapter would (UserError naming the file and the module) and keeps nothing.
  void check_adapter(const std::filesystem::path& peft) const;
  void switch_adapter(const std::filesystem::path& peft);

 private:
  WeightArchive();
  std::vector<TensorEdit> delta_edits(const TensorView& base) const;

  std::unique_ptr<WeightFiles> base_, delta_;
  std::string architecture_;                 // config.json's, for adapters (GPT-2's Conv1D layers)
  bool tied_embeddings_ = false;             // for adapters: an embedding tied to the output layer
  std::unique_ptr<QuantizedWeights> quant_;  // a pre-quantised checkpoint's packed weights
  std::unique_ptr<LoraAdapter> adapter_;
  std::string delta_round_;  // the dtype the delta is added in ("" = float32)
  std::string embedding_;    // the input embedding when lm_head is tied to it (for delta=)
  std::unique_ptr<std::map<std::string, std::vector<TensorEdit>>> edits_;
  mutable std::map<std::string, TensorView> made_;
  mutable std::mutex made_mutex_;
};

// generation_config.json's eos_token_id(s) (empty when absent).
std::vector<int64_t> load_generation_eos(const std::filesystem::path& model_dir);

}  // namespace lmeval::hf

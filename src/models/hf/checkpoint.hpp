// Torch-free reading of a Hugging Face model folder: memory-mapped safetensors and config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
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

// All weights of a model folder: model.safetensors, or the shards of model.safetensors.index.json.
class WeightArchive {
 public:
  // Throws UserError when there are no safetensors weights (pytorch_model.bin is refused with a
  // message telling how to convert it).
  static std::unique_ptr<WeightArchive> open(const std::filesystem::path& model_dir);

  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  void release(const TensorView& t) const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::pair<const SafetensorsFile*, const TensorView*>> index_;
};

// A JSON file of a model folder (what names it in messages); UserError when unreadable or not JSON.
Json read_json_file(const std::filesystem::path& path, const std::string& what);

// generation_config.json's eos_token_id(s) (empty when absent).
std::vector<int64_t> load_generation_eos(const std::filesystem::path& model_dir);

}  // namespace lmeval::hf

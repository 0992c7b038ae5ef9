// The weight files of one folder, read as transformers picks them: model.safetensors, the shards
// of model.safetensors.index.json, pytorch_model.bin, the shards of pytorch_model.bin.index.json
// (and a PEFT adapter's single adapter_model file). No torch here.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "models/hf/checkpoint.hpp"
#include "models/hf/torch_file.hpp"

namespace lmeval::hf {

class GgufTensors;

class WeightFiles {
 public:
  // A model folder's weights. Throws UserError naming the folder when it has none, and naming
  // the file for a bad index or weights file.
  static std::unique_ptr<WeightFiles> open_model(const std::filesystem::path& dir);
  // One weights file: *.safetensors, anything else as torch.save's.
  static std::unique_ptr<WeightFiles> open_file(const std::filesystem::path& path);
  // A GGUF file's tensors under transformers' names, as float32 (gguf_model.hpp).
  static std::unique_ptr<WeightFiles> open_gguf(const std::filesystem::path& path);
  ~WeightFiles();

  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  void release(const TensorView& t) const;
  // The file the tensors were read from, or the index that named the shards.
  const std::filesystem::path& source() const { return source_; }

 private:
  using File = std::variant<std::unique_ptr<SafetensorsFile>, std::unique_ptr<TorchFile>>;
  void add(const std::filesystem::path& file);

  std::filesystem::path source_;
  std::deque<File> files_;  // a deque: index_ points at its elements
  std::map<std::string, std::pair<const File*, const TensorView*>> index_;
  std::unique_ptr<GgufTensors> gguf_;  // set for a GGUF file, which index_ then does not hold
};

}  // namespace lmeval::hf

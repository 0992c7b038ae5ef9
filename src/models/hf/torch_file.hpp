// The tensors of one torch.save file (pytorch_model.bin): the zip format (torch >= 1.6) and the
// legacy format before it, read without Python and without running anything from the pickle.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "models/hf/checkpoint.hpp"
#include "models/hf/mapped_file.hpp"
#include "models/hf/torch_pickle.hpp"

namespace lmeval::hf {

class TorchFile {
 public:
  // Throws UserError naming the file for anything that is not a state dict of dense tensors
  // written by torch.save, or whose tensors reach past their storages.
  explicit TorchFile(const std::filesystem::path& path);

  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::filesystem::path& path() const { return map_.path(); }
  // Drops the pages of a tensor already converted (a strided tensor copied at load owns its
  // bytes and has none).
  void release(const TensorView& t) const;

 private:
  void read_zip();
  void read_legacy();
  // Views of the pickled tensors over their storages' bytes (one span per dict.storages entry).
  void add_tensors(const PickledStateDict& dict,
                   const std::vector<std::pair<const std::byte*, size_t>>& storages);

  MappedFile map_;
  std::map<std::string, TensorView> tensors_;
};

}  // namespace lmeval::hf

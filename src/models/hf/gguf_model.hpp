// A GGUF file read as transformers reads it with from_pretrained(..., gguf_file=...)
// (modeling_gguf_pytorch_utils.load_gguf_checkpoint): a config.json built from its metadata, and
// its tensors under transformers' names, dequantised to float32 (and the Q/K rows llama.cpp's
// converter permuted put back). No torch here.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "models/hf/checkpoint.hpp"
#include "models/hf/gguf_file.hpp"

namespace lmeval::hf {

// How transformers reads one GGUF architecture (gguf_model.cpp).
struct GgufArch;

// The GGUF architectures lm-eval reads natively, for messages ("llama, qwen2, ...").
std::string gguf_native_architectures();

// The config.json transformers builds from the GGUF's metadata (its GGUF_CONFIG_MAPPING, the
// config class's defaults where the metadata is silent). Throws UserError naming the file and
// the key for an architecture lm-eval does not read natively or a missing / mistyped key.
Json gguf_config_json(const GgufFile& f);

class GgufTensors {
 public:
  // Throws UserError naming the file for a malformed file or an unsupported architecture.
  explicit GgufTensors(const std::filesystem::path& path);

  const Json& config() const { return config_; }
  const std::filesystem::path& path() const { return file_.path(); }
  // The tensor of that transformers name as float32, made when first asked for and kept until
  // released. Throws UserError naming the tensor and its type when the type is not dequantised.
  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;
  void release(const TensorView& t) const;

 private:
  void process(const GgufTensorInfo& t, TensorView& v, std::vector<float>& w) const;
  void fuse_up(const GgufTensorInfo& up, TensorView& v, std::vector<float>& w) const;

  GgufFile file_;
  Json config_;
  const GgufArch* arch_ = nullptr;
  std::map<std::string, const GgufTensorInfo*> by_hf_name_;
  // qwen2moe / qwen3moe: ffn_up_exps, fused after by_hf_name_'s ffn_gate_exps in gate_up_proj.
  std::map<std::string, const GgufTensorInfo*> up_of_;
  mutable std::map<std::string, TensorView> made_;
  mutable std::mutex mutex_;
};

}  // namespace lmeval::hf

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
  // The run's dtype=: HFLM loads the model and the delta in it and adds in it.
  std::string dtype = "auto";
};

class WeightFiles;
class LoraAdapter;
struct TensorEdit;

// All weights of a model: its folder's weight files (weight_files.hpp), with an adapter or a
// delta applied to each tensor as it is asked for.
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

 private:
  WeightArchive();
  std::vector<TensorEdit> delta_edits(const TensorView& base) const;

  std::unique_ptr<WeightFiles> base_, delta_;
  std::unique_ptr<LoraAdapter> adapter_;
  std::string delta_round_;  // the dtype the delta is added in ("" = float32)
  std::string embedding_;    // the input embedding when lm_head is tied to it (for delta=)
  std::unique_ptr<std::map<std::string, std::vector<TensorEdit>>> edits_;
  mutable std::map<std::string, TensorView> made_;
  mutable std::mutex made_mutex_;
};

enum class NormKind { kRms, kLayerNorm };
enum class Activation { kSilu, kGeluTanh, kGeluExact, kRelu };
// transformers' rope_type values. kDynamic and kLongRope pick their frequencies from a sequence's
// length (rope.hpp).
enum class RopeType { kNone, kDefault, kLinear, kLlama3, kYarn, kDynamic, kLongRope };

// What distinguishes one architecture from another, as configuration of one transformer block.
struct ArchConfig {
  std::string architecture;  // e.g. "LlamaForCausalLM"
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  std::optional<int64_t> max_position_embeddings;  // n_positions / max_position_embeddings / n_ctx

  NormKind norm = NormKind::kRms;
  bool norm_plus_one = false;  // Gemma: x·(1 + w), all in float32
  double norm_eps = 1e-5;
  Activation activation = Activation::kSilu;
  bool gated_mlp = true;           // down(act(gate(x))·up(x)) vs fc2(act(fc1(x)))
  bool parallel_residual = false;  // x + attn(ln1 x) + mlp(ln2 x) (NeoX) or one shared norm (Phi)
  bool shared_layer_norm = false;  // Phi: one input_layernorm feeds attention and MLP
  bool sandwich_norms = false;     // Gemma2: norms on the branch outputs too
  bool qk_norm = false;            // Qwen3: RMSNorm over head_dim on q and k; Phi: LayerNorm
  bool post_norm = false;          // OPT do_layer_norm_before=false: norm after each residual add
  bool final_norm = true;          // a norm before the LM head (absent in post-norm OPT)
  int64_t embed_proj_dim = 0;      // OPT word_embed_proj_dim != hidden_size: projected in and out
  bool embed_scale = false;        // Gemma: embeddings·√hidden
  int64_t learned_positions = 0;   // rows of a learned position table (GPT-2, OPT), 0 = none
  int64_t position_offset = 0;     // OPT's offset of 2

  RopeType rope = RopeType::kNone;
  double rope_theta = 10000.0;
  int64_t rotary_dim = 0;
  double rope_factor = 1.0, rope_low_freq_factor = 1.0, rope_high_freq_factor = 4.0;
  int64_t rope_original_max_positions = 8192;
  double rope_attention_factor = 1.0;                  // YaRN/LongRoPE scale of cos and sin
  double rope_beta_fast = 32.0, rope_beta_slow = 1.0;  // YaRN ramp
  bool rope_truncate = true;                           // YaRN: whole dimensions at the ramp's ends
  std::vector<double> rope_short_factor, rope_long_factor;  // LongRoPE, rotary_dim / 2 each

  double attn_scale = 0.0;                         // multiplies q·k
  double attn_softcap = 0.0, final_softcap = 0.0;  // 0 = off
  std::vector<int64_t> layer_sliding_window;       // per layer, 0 = full attention

  bool tie_word_embeddings = false;
  std::string torch_dtype;  // config's torch_dtype / dtype ("" when absent)
  std::optional<int64_t> bos_token_id, eos_token_id, pad_token_id;
};

// The architectures() values this backend runs.
const std::vector<std::string>& supported_architectures();

// Parses config.json (path for messages). Throws UserError for unsupported architectures or
// missing/invalid fields.
ArchConfig parse_arch_config(const Json& config, const std::string& path);
ArchConfig load_arch_config(const std::filesystem::path& model_dir);

// generation_config.json's eos_token_id(s) (empty when absent).
std::vector<int64_t> load_generation_eos(const std::filesystem::path& model_dir);

}  // namespace lmeval::hf

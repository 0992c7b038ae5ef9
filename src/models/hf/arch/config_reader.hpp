// Reading config.json for the architecture files: typed fields that name the file and the field
// when they are wrong, and the parts several families share (rotary settings, activations, head
// sizes, per-layer attention types). Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "models/hf/arch/arch_config.hpp"

namespace lmeval::hf {

// Fields of config.json; every error names the file and the JSON path.
class ConfigReader {
 public:
  ConfigReader(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  bool has(const std::string& k) const { return j_.contains(k) && !j_[k].is_null(); }

  int64_t int_(const std::string& k) const {
    if (!has(k))
      throw UserError("config.json lacks '" + k + "'", {path_, 0, 0, "$." + k}, "an integer");
    return as_int(j_[k], k);
  }
  int64_t int_or(const std::string& k, int64_t def) const {
    return has(k) ? as_int(j_[k], k) : def;
  }
  // A size (layers, heads, widths): refused outside [1, 2^31) before anything is allocated from it.
  int64_t size_(const std::string& k) const { return in_range(k, int_(k), 1); }
  int64_t size_or(const std::string& k, int64_t def) const {
    return has(k) ? in_range(k, as_int(j_[k], k), 1) : def;
  }
  int64_t in_range(const std::string& k, int64_t v, int64_t min) const {
    constexpr int64_t kMax = (int64_t{1} << 31) - 1;
    if (v < min || v > kMax)
      throw UserError("'" + k + "' is " + std::to_string(v), {path_, 0, 0, "$." + k},
                      "an integer from " + std::to_string(min) + " to " + std::to_string(kMax));
    return v;
  }
  // max_position_embeddings / n_positions: positive when given.
  std::optional<int64_t> opt_size(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    return in_range(k, as_int(j_[k], k), 1);
  }
  double num_or(const std::string& k, double def) const { return has(k) ? as_num(j_[k], k) : def; }
  bool bool_or(const std::string& k, bool def) const {
    if (!has(k)) return def;
    if (!j_[k].is_boolean())
      throw UserError("'" + k + "' is not a boolean", {path_, 0, 0, "$." + k}, "true or false");
    return j_[k].get<bool>();
  }
  std::string str_or(const std::string& k, const std::string& def) const {
    if (!has(k)) return def;
    if (!j_[k].is_string())
      throw UserError("'" + k + "' is not a string", {path_, 0, 0, "$." + k}, "a string");
    return j_[k].get<std::string>();
  }
  std::optional<int64_t> opt_int(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    // eos_token_id may be a list; the first one is the model's EOS for our purposes.
    if (j_[k].is_array()) return j_[k].empty() ? std::nullopt : std::optional(as_int(j_[k][0], k));
    return as_int(j_[k], k);
  }
  int64_t as_int(const Json& v, const std::string& k) const {
    if (!v.is_number_integer())
      throw UserError("'" + k + "' is not an integer", {path_, 0, 0, "$." + k}, "an integer");
    return v.get<int64_t>();
  }
  double as_num(const Json& v, const std::string& k) const {
    if (!v.is_number())
      throw UserError("'" + k + "' is not a number", {path_, 0, 0, "$." + k}, "a number");
    return v.get<double>();
  }
  const Json& json() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  const Json& j_;
  std::string path_;
};

// transformers' ACT2FN names this backend computes.
Activation parse_activation(const std::string& name, const std::string& path,
                            const std::string& field);

// The names of torch's dtypes, the names a config's dtype may take.
bool is_torch_dtype_name(const std::string& name);

// Rotary settings from transformers 5's rope_parameters or 4.x's rope_theta/rope_scaling, with
// the family's default partial rotary factor and theta.
void parse_rope(const ConfigReader& c, ArchConfig& a, double default_partial, double default_theta);

// head_dim, num_kv_heads and the attention scale from the sizes read so far, as transformers'
// attention modules derive them; refuses sizes no model can have.
void finish_heads(const ConfigReader& c, ArchConfig& a);

// transformers 5's layer_types: "sliding_attention" layers get `window`; false when absent.
bool parse_layer_types(const ConfigReader& c, ArchConfig& a, int64_t window);

// The defaults of a family's config class for fields its config.json may leave out.
struct LlamaDefaults {
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  double rope_theta = 10000.0;
};

// The fields every Llama-shaped config has (hidden_size, num_hidden_layers, heads, head_dim,
// intermediate_size, max_position_embeddings, rms_norm_eps, hidden_act, tie_word_embeddings)
// and its rotary settings; no sliding windows.
void parse_llama_shape(const ConfigReader& c, ArchConfig& a, const LlamaDefaults& d = {});

// Hybrid sliding/global layers: layer_types when the config has it, else every `every`-th layer
// global and the others sliding with `window` ((i + 1) % every), as Gemma3, OLMo3, Cohere2 and
// EXAONE 4 derive their layer_types.
void parse_window_pattern(const ConfigReader& c, ArchConfig& a, int64_t window, int64_t every);

// Rotary embedding only on the sliding-window layers (global NoPE: Cohere2, EXAONE 4).
void rope_on_sliding_layers_only(ArchConfig& a);

// Rotary settings per layer type (Gemma3, OLMo3): transformers 5 writes rope_parameters as
// {"full_attention": {...}, "sliding_attention": {...}}; the full layers' parameters are the
// model's rotary settings, the sliding layers' (default type only) its local base. A config in
// the older flat form gets `legacy_local_theta` for the sliding layers, as the family's
// convert_rope_params_to_dict gives them.
void parse_layer_type_rope(const ConfigReader& c, ArchConfig& a, double default_theta,
                           double legacy_local_theta);

// Qwen-style MoE layer selection: every decoder_sparse_step-th layer, except mlp_only_layers.
void parse_moe_layers(const ConfigReader& c, ArchConfig& a);

}  // namespace lmeval::hf

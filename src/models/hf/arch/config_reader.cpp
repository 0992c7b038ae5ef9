// The shared parts of reading config.json (config_reader.hpp).
#include "models/hf/arch/config_reader.hpp"

#include <cmath>
#include <set>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

Activation parse_activation(const std::string& name, const std::string& path,
                            const std::string& field) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "gelu_new") return Activation::kGeluNew;
  if (name == "gelu_fast") return Activation::kGeluFast;
  if (name == "gelu") return Activation::kGeluExact;
  if (name == "relu") return Activation::kRelu;
  throw UserError("unsupported activation '" + name + "'", {path, 0, 0, field},
                  "one of silu, swish, gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, relu");
}

// The names of torch's dtypes (torch 2.15: [n for n in dir(torch) if isinstance(getattr(torch, n),
// torch.dtype)]), the names a config's dtype may take.
bool is_torch_dtype_name(const std::string& name) {
  static const std::set<std::string> names = {"bcomplex32",
                                              "bfloat16",
                                              "bit",
                                              "bits16",
                                              "bits1x8",
                                              "bits2x4",
                                              "bits4x2",
                                              "bits8",
                                              "bool",
                                              "cdouble",
                                              "cfloat",
                                              "chalf",
                                              "complex128",
                                              "complex32",
                                              "complex64",
                                              "double",
                                              "float",
                                              "float16",
                                              "float32",
                                              "float4_e2m1fn_x2",
                                              "float64",
                                              "float8_e4m3fn",
                                              "float8_e4m3fnuz",
                                              "float8_e5m2",
                                              "float8_e5m2fnuz",
                                              "float8_e8m0fnu",
                                              "half",
                                              "int",
                                              "int1",
                                              "int16",
                                              "int2",
                                              "int3",
                                              "int32",
                                              "int4",
                                              "int5",
                                              "int6",
                                              "int64",
                                              "int7",
                                              "int8",
                                              "long",
                                              "qint32",
                                              "qint8",
                                              "quint2x4",
                                              "quint4x2",
                                              "quint8",
                                              "short",
                                              "uint1",
                                              "uint16",
                                              "uint2",
                                              "uint3",
                                              "uint32",
                                              "uint4",
                                              "uint5",
                                              "uint6",
                                              "uint64",
                                              "uint7",
                                              "uint8"};
  return names.count(name) > 0;
}

// Rotary settings from transformers 5's rope_parameters or 4.x's rope_theta/rope_scaling.
void parse_rope(const ConfigReader& c, ArchConfig& a, double default_partial,
                double default_theta) {
  const Json& j = c.json();
  // transformers' config classes validate rope_parameters (4.x's rope_scaling is converted into
  // it) as a mapping and raise StrictDataclassFieldValidationError for a string, a number or a
  // list; ignoring it would run the model with default rotary settings.
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (c.has(key) && !j[key].is_object())
      throw UserError(std::string(key) + " is " + j[key].dump() + ", not a mapping",
                      {c.path(), 0, 0, std::string("$.") + key},
                      "a mapping such as {\"rope_type\": \"linear\", \"factor\": 2.0}, or null");
  Json params = Json::object();
  if (c.has("rope_parameters") && j["rope_parameters"].is_object()) params = j["rope_parameters"];
  Json scaling = Json::object();
  if (c.has("rope_scaling") && j["rope_scaling"].is_object()) scaling = j["rope_scaling"];
  for (const auto& [k, v] : scaling.items())
    if (!params.contains(k)) params[k] = v;
  auto pnum = [&](const char* k, double def) {
    if (params.contains(k) && params[k].is_number()) return params[k].get<double>();
    return def;
  };
  a.rope_theta =
      pnum("rope_theta", c.num_or("rope_theta", c.num_or("rotary_emb_base", default_theta)));
  double partial = pnum("partial_rotary_factor",
                        c.num_or("partial_rotary_factor", c.num_or("rotary_pct", default_partial)));
  a.rotary_dim = static_cast<int64_t>(static_cast<double>(a.head_dim) * partial);
  std::string type = "default";
  if (params.contains("rope_type") && params["rope_type"].is_string())
    type = params["rope_type"].get<std::string>();
  else if (params.contains("type") && params["type"].is_string())
    type = params["type"].get<std::string>();
  const bool phi3 = a.architecture == "Phi3ForCausalLM";
  // Phi3Config reads its old names "su" and "yarn" as longrope.
  if (phi3 && (type == "su" || type == "yarn")) type = "longrope";
  const std::string field = c.has("rope_parameters") ? "$.rope_parameters" : "$.rope_scaling";
  auto need_max_positions = [&]() {
    if (!a.max_position_embeddings)
      throw UserError("rope type '" + type + "' needs max_position_embeddings",
                      {c.path(), 0, 0, "$.max_position_embeddings"}, "the model's maximum length");
    return *a.max_position_embeddings;
  };
  // transformers' standardize_rope_params: the pretraining length of llama3/yarn/longrope comes
  // from the rope parameters, else max_position_embeddings; Phi3's own top-level field wins.
  auto original_max = [&]() {
    if (phi3) return c.int_or("original_max_position_embeddings", 4096);
    if (params.contains("original_max_position_embeddings") &&
        params["original_max_position_embeddings"].is_number())
      return params["original_max_position_embeddings"].get<int64_t>();
    return need_max_positions();
  };
  auto factors = [&](const char* key) {
    std::vector<double> out;
    if (params.contains(key) && params[key].is_array())
      for (const auto& v : params[key])
        if (v.is_number()) out.push_back(v.get<double>());
    if (static_cast<int64_t>(out.size()) != a.rotary_dim / 2 ||
        (params.contains(key) && out.size() != params[key].size()))
      throw UserError(std::string(key) + " must hold rotary_dim / 2 = " +
                          std::to_string(a.rotary_dim / 2) + " numbers",
                      {c.path(), 0, 0, field + "." + key},
                      "a list of " + std::to_string(a.rotary_dim / 2) + " numbers");
    return out;
  };
  if (type == "default") {
    a.rope = RopeType::kDefault;
  } else if (type == "linear") {
    a.rope = RopeType::kLinear;
    a.rope_factor = pnum("factor", 1.0);
  } else if (type == "llama3") {
    a.rope = RopeType::kLlama3;
    a.rope_factor = pnum("factor", 8.0);
    a.rope_low_freq_factor = pnum("low_freq_factor", 1.0);
    a.rope_high_freq_factor = pnum("high_freq_factor", 4.0);
    a.rope_original_max_positions = original_max();
  } else if (type == "yarn") {
    // transformers' _compute_yarn_parameters.
    a.rope = RopeType::kYarn;
    a.rope_original_max_positions = original_max();
    a.rope_factor = pnum("factor", static_cast<double>(need_max_positions()) /
                                       static_cast<double>(a.rope_original_max_positions));
    auto mscale = [](double scale, double m) {
      return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
    };
    const double ms = pnum("mscale", 0.0), ms_all = pnum("mscale_all_dim", 0.0);
    if (params.contains("attention_factor") && params["attention_factor"].is_number())
      a.rope_attention_factor = params["attention_factor"].get<double>();
    else if (ms != 0.0 && ms_all != 0.0)
      a.rope_attention_factor = mscale(a.rope_factor, ms) / mscale(a.rope_factor, ms_all);
    else
      a.rope_attention_factor = mscale(a.rope_factor, 1.0);
    // `get("beta_fast") or 32`: a zero means the default too.
    a.rope_beta_fast = pnum("beta_fast", 0.0) != 0.0 ? pnum("beta_fast", 0.0) : 32.0;
    a.rope_beta_slow = pnum("beta_slow", 0.0) != 0.0 ? pnum("beta_slow", 0.0) : 1.0;
    a.rope_truncate = !(params.contains("truncate") && params["truncate"].is_boolean()) ||
                      params["truncate"].get<bool>();
  } else if (type == "dynamic") {
    // transformers' _compute_dynamic_ntk_parameters; the length is applied per sequence (rope.cpp).
    a.rope = RopeType::kDynamic;
    a.rope_factor = pnum("factor", 1.0);
    need_max_positions();
  } else if (type == "longrope") {
    // transformers' _compute_longrope_parameters.
    a.rope = RopeType::kLongRope;
    a.rope_original_max_positions = original_max();
    a.rope_short_factor = factors("short_factor");
    a.rope_long_factor = factors("long_factor");
    const double factor = pnum("factor", static_cast<double>(need_max_positions()) /
                                             static_cast<double>(a.rope_original_max_positions));
    if (params.contains("attention_factor") && params["attention_factor"].is_number())
      a.rope_attention_factor = params["attention_factor"].get<double>();
    else
      a.rope_attention_factor =
          factor <= 1.0
              ? 1.0
              : std::sqrt(1 + std::log(factor) /
                                  std::log(static_cast<double>(a.rope_original_max_positions)));
  } else {
    throw UserError("unsupported rope type '" + type + "'", {c.path(), 0, 0, field},
                    "default, linear, llama3, yarn, dynamic or longrope rotary embeddings");
  }
}

void finish_heads(const ConfigReader& c, ArchConfig& a) {
  const std::string& path = c.path();
  if (a.num_heads <= 0 || a.hidden_size <= 0 || a.num_layers <= 0)
    throw UserError("config.json has non-positive sizes", {path, 0, 0, ""}, "positive sizes");
  // transformers: `getattr(config, "head_dim", None) or hidden_size // num_attention_heads`.
  if (a.head_dim <= 0) a.head_dim = a.hidden_size / a.num_heads;
  if (a.head_dim <= 0)
    throw UserError("hidden_size " + std::to_string(a.hidden_size) +
                        " is smaller than num_attention_heads " + std::to_string(a.num_heads),
                    {path, 0, 0, "$.num_attention_heads"},
                    "at most hidden_size heads (or a head_dim)");
  if (a.num_kv_heads <= 0) a.num_kv_heads = a.num_heads;
  if (a.num_heads % a.num_kv_heads != 0)
    throw UserError("num_attention_heads is not a multiple of num_key_value_heads",
                    {path, 0, 0, "$.num_key_value_heads"}, "a divisor of num_attention_heads");
  a.attn_scale = 1.0 / std::sqrt(static_cast<double>(a.head_dim));
}

bool parse_layer_types(const ConfigReader& c, ArchConfig& a, int64_t window) {
  const Json& j = c.json();
  if (!c.has("layer_types") || !j["layer_types"].is_array()) return false;
  a.layer_sliding_window.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers && i < static_cast<int64_t>(j["layer_types"].size()); ++i)
    if (j["layer_types"][i] == "sliding_attention") a.layer_sliding_window[i] = window;
  return true;
}

void parse_llama_shape(const ConfigReader& c, ArchConfig& a, const LlamaDefaults& d) {
  a.hidden_size = c.size_("hidden_size");
  a.num_layers = c.size_("num_hidden_layers");
  a.num_heads = c.size_("num_attention_heads");
  a.num_kv_heads = c.size_or("num_key_value_heads", a.num_heads);
  a.head_dim = c.has("head_dim") ? c.in_range("head_dim", c.int_("head_dim"), 0) : 0;
  a.intermediate_size = c.size_("intermediate_size");
  a.max_position_embeddings = c.opt_size("max_position_embeddings");
  a.norm = NormKind::kRms;
  a.norm_eps = c.num_or("rms_norm_eps", d.rms_norm_eps);
  a.gated_mlp = true;
  a.activation = parse_activation(c.str_or("hidden_act", "silu"), c.path(), "$.hidden_act");
  a.tie_word_embeddings = c.bool_or("tie_word_embeddings", d.tie_word_embeddings);
  finish_heads(c, a);
  parse_rope(c, a, 1.0, d.rope_theta);
  a.layer_sliding_window.assign(a.num_layers, 0);
}

}  // namespace lmeval::hf

namespace lmeval::hf {

void parse_moe_layers(const ConfigReader& c, ArchConfig& a) {
  const int64_t step = c.size_or("decoder_sparse_step", 1);
  a.layer_moe.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers; ++i) a.layer_moe[i] = (i + 1) % step == 0;
  if (c.has("mlp_only_layers")) {
    const Json& only = c.json()["mlp_only_layers"];
    if (!only.is_array())
      throw UserError("mlp_only_layers is not a list", {c.path(), 0, 0, "$.mlp_only_layers"},
                      "a list of layer indices");
    for (const auto& v : only) {
      if (!v.is_number_integer())
        throw UserError("mlp_only_layers holds " + v.dump(), {c.path(), 0, 0, "$.mlp_only_layers"},
                        "layer indices");
      const int64_t i = v.get<int64_t>();
      if (i >= 0 && i < a.num_layers) a.layer_moe[i] = 0;
    }
  }
}

void parse_layer_type_rope(const ConfigReader& c, ArchConfig& a, double default_theta,
                           double legacy_local_theta) {
  const Json& j = c.json();
  const bool per_type = c.has("rope_parameters") && j["rope_parameters"].is_object() &&
                        (j["rope_parameters"].contains("full_attention") ||
                         j["rope_parameters"].contains("sliding_attention"));
  if (!per_type) {
    parse_rope(c, a, 1.0, default_theta);
    a.rope_local_theta = legacy_local_theta;
    return;
  }
  const Json& rp = j["rope_parameters"];
  auto part = [&](const char* type) {
    if (!rp.contains(type) || rp[type].is_null()) return Json::object();
    if (!rp[type].is_object())
      throw UserError(std::string("rope_parameters.") + type + " is not a mapping",
                      {c.path(), 0, 0, std::string("$.rope_parameters.") + type},
                      "a mapping such as {\"rope_type\": \"default\", \"rope_theta\": 10000.0}");
    return rp[type];
  };
  Json full_view = j;  // the full layers' parameters read as the model's own
  full_view["rope_parameters"] = part("full_attention");
  parse_rope(ConfigReader(full_view, c.path()), a, 1.0, default_theta);
  const Json sliding = part("sliding_attention");
  const std::string field = "$.rope_parameters.sliding_attention";
  if (sliding.contains("rope_type") &&
      !(sliding["rope_type"].is_string() && sliding["rope_type"] == "default"))
    throw UserError("sliding-window layers with rope type " + sliding["rope_type"].dump() +
                        " are not supported",
                    {c.path(), 0, 0, field + ".rope_type"}, "\"default\"");
  a.rope_local_theta = legacy_local_theta;
  if (sliding.contains("rope_theta")) {
    if (!sliding["rope_theta"].is_number())
      throw UserError("rope_theta is not a number", {c.path(), 0, 0, field + ".rope_theta"},
                      "a number");
    a.rope_local_theta = sliding["rope_theta"].get<double>();
  }
}

void parse_window_pattern(const ConfigReader& c, ArchConfig& a, int64_t window, int64_t every) {
  if (parse_layer_types(c, a, window)) return;
  for (int64_t i = 0; i < a.num_layers; ++i)
    a.layer_sliding_window[i] = (i + 1) % every ? window : 0;
}

void rope_on_sliding_layers_only(ArchConfig& a) {
  a.layer_rope.assign(a.num_layers, 0);
  for (int64_t i = 0; i < a.num_layers; ++i) a.layer_rope[i] = a.layer_sliding_window[i] > 0;
}

}  // namespace lmeval::hf

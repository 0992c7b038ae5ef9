// transformers' reading of a GGUF (modeling_gguf_pytorch_utils.load_gguf_checkpoint with
// integrations/ggml.py's GGUF_CONFIG_MAPPING and its TensorProcessors) for the architectures
// lm-eval runs natively from a GGUF.
#include "models/hf/gguf_model.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

namespace {

struct GgufArch {
  const char* gguf;        // general.architecture
  const char* model_type;  // config.json's
  const char* hf_arch;     // architectures[0]
  // GGUF_CONFIG_MAPPING maps rope.dimension_count to head_dim for llama only (the other
  // architectures' entry is None: ignored).
  bool head_dim_from_rope;
  // The config class's defaults for keys the metadata may leave out (transformers builds the
  // config class from the mapped keys alone).
  const char* defaults;
  // Block tensors whose transformers name differs from kBlockNames' (gguf-py's tensor map of the
  // architecture): "ffn_up" is Phi-3's fused gate_up_proj.
  std::vector<std::pair<const char*, const char*>> block_names = {};
  // GGUF_CONFIG_MAPPING's keys of this architecture beyond kArchKeys.
  std::vector<std::pair<const char*, const char*>> keys = {};
  // Gemma2TensorProcessor: llama.cpp stores Gemma's norm weights plus one; transformers takes
  // the one off every "*norm.weight".
  bool norm_minus_one = false;
  // Gemma3TextConfig keeps rope_theta as rope_parameters.full_attention's (the sliding layers
  // keep their 10000): rope.freq_base goes there.
  bool layer_type_rope = false;
  // kArchKeys' entries this architecture's mapping leaves out (StableLM's has no rope.freq_base
  // and no RMS epsilon: a file's values there are ignored, as there).
  std::vector<const char*> unmapped = {};
  // GPT-2's layout: its own prefixes and top-level names (kModelNames otherwise), and
  // GPT2TensorProcessor's transposes (llama.cpp stores its Conv1D weights [out, in]).
  const char* layer_prefix = "model.layers.";
  std::vector<std::pair<const char*, const char*>> model_names = {};
  std::vector<const char*> transposed = {};
};

// LlamaConfig, Qwen2Config, Qwen3Config, Phi3Config of transformers 5.23. Qwen3Config's head_dim
// is 128 whatever hidden_size / num_attention_heads is, and no metadata key maps to it for qwen3.
const std::array<GgufArch, 9> kArchs = {{
    {"llama", "llama", "LlamaForCausalLM", true,
     R"({"max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
         "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu"})"},
    {"qwen2", "qwen2", "Qwen2ForCausalLM", false,
     R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
         "use_sliding_window": false, "hidden_act": "silu"})"},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", false,
     R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
         "use_sliding_window": false, "head_dim": 128, "hidden_act": "silu"})"},
    // llama.cpp's Phi-3 files keep the fused projections; rope_factors_long/short (LongRoPE)
    // have no transformers parameter and no config key maps to rope scaling: plain RoPE, as there.
    {"phi3",
     "phi3",
     "Phi3ForCausalLM",
     false,
     R"({"max_position_embeddings": 4096, "original_max_position_embeddings": 4096,
         "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "bos_token_id": 1,
         "eos_token_id": 32000, "pad_token_id": 32000, "hidden_act": "silu",
         "sliding_window": null})",
     {{"attn_qkv", "self_attn.qkv_proj"}, {"ffn_up", "mlp.gate_up_proj"}}},
    // Gemma2Config's defaults: no metadata key maps to the soft-capping or query_pre_attn_scalar
    // (llama.cpp writes gemma2.attn_logit_softcapping, which transformers does not read).
    {"gemma2",
     "gemma2",
     "Gemma2ForCausalLM",
     false,
     R"({"max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
         "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "pad_token_id": 0,
         "eos_token_id": 1, "bos_token_id": 2, "query_pre_attn_scalar": 256,
         "sliding_window": 4096, "final_logit_softcapping": 30.0,
         "attn_logit_softcapping": 50.0, "attention_bias": false})",
     {{"post_attention_norm", "post_attention_layernorm"},
      {"ffn_norm", "pre_feedforward_layernorm"},
      {"post_ffw_norm", "post_feedforward_layernorm"}},
     {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}},
     true},
    // load_gguf_checkpoint makes a gemma3 file's model_type gemma3_text (its text backbone);
    // Gemma3TextConfig's defaults: five sliding layers to one global, query_pre_attn_scalar 256,
    // no soft-capping. Gemma2TensorProcessor takes the one off every norm, q/k norms included.
    {"gemma3",
     "gemma3_text",
     "Gemma3ForCausalLM",
     false,
     R"({"max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "head_dim": 256,
         "hidden_activation": "gelu_pytorch_tanh", "pad_token_id": 0, "eos_token_id": 1,
         "bos_token_id": 2, "query_pre_attn_scalar": 256, "sliding_window": 4096,
         "sliding_window_pattern": 6, "final_logit_softcapping": null,
         "attn_logit_softcapping": null, "attention_bias": false,
         "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                             "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}}})",
     {{"post_attention_norm", "post_attention_layernorm"},
      {"ffn_norm", "pre_feedforward_layernorm"},
      {"post_ffw_norm", "post_feedforward_layernorm"}},
     {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}},
     true,
     true},
    // StableLmConfig's defaults; load_gguf_checkpoint sets use_qkv_bias and
    // use_parallel_residual from the tensors (gguf_config_json). No key maps to qk_layernorm.
    {"stablelm",
     "stablelm",
     "StableLmForCausalLM",
     false,
     R"({"max_position_embeddings": 4096, "layer_norm_eps": 1e-05, "hidden_act": "silu",
         "rope_parameters": {"rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                             "rope_type": "default"},
         "qk_layernorm": false, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": null})",
     {},
     {{"attention.layer_norm_epsilon", "layer_norm_eps"}},
     false,
     false,
     {"rope.freq_base", "attention.layer_norm_rms_epsilon"}},
    // Starcoder2Config's defaults (no sliding window unless config.json says so); the mapping
    // has no vocab_size: the vocabulary's size comes from tokenizer.ggml.tokens.
    {"starcoder2",
     "starcoder2",
     "Starcoder2ForCausalLM",
     false,
     R"({"max_position_embeddings": 4096, "norm_epsilon": 1e-05, "hidden_act": "gelu_pytorch_tanh",
         "rope_theta": 10000.0, "use_bias": true, "sliding_window": null, "bos_token_id": 50256,
         "eos_token_id": 50256, "pad_token_id": null})",
     {{"ffn_up", "mlp.c_fc"}, {"ffn_down", "mlp.c_proj"}},
     {{"attention.layer_norm_epsilon", "norm_epsilon"}},
     false,
     false,
     {"rope.freq_base", "attention.layer_norm_rms_epsilon", "vocab_size"}},
    // GPT2Config's defaults: the mapping's n_ctx and feed_forward_length are no GPT2Config fields
    // (n_positions stays 1024, n_inner None: 4 * n_embd), the vocabulary's size from the tokens.
    {"gpt2",
     "gpt2",
     "GPT2LMHeadModel",
     false,
     R"({"n_positions": 1024, "n_inner": null, "activation_function": "gelu_new",
         "layer_norm_epsilon": 1e-05, "bos_token_id": 50256, "eos_token_id": 50256})",
     {{"attn_norm", "ln_1"},
      {"ffn_norm", "ln_2"},
      {"attn_qkv", "attn.c_attn"},
      {"attn_output", "attn.c_proj"},
      {"ffn_up", "mlp.c_fc"},
      {"ffn_down", "mlp.c_proj"}},
     {{"block_count", "n_layer"},
      {"context_length", "n_ctx"},
      {"embedding_length", "n_embd"},
      {"feed_forward_length", "feed_forward_length"},
      {"attention.head_count", "n_head"},
      {"attention.layer_norm_epsilon", "layer_norm_epsilon"}},
     false,
     false,
     {"context_length", "block_count", "feed_forward_length", "embedding_length", "rope.freq_base",
      "attention.head_count", "attention.head_count_kv", "attention.layer_norm_rms_epsilon",
      "vocab_size"},
     "transformer.h.",
     {{"token_embd", "transformer.wte"},
      {"position_embd", "transformer.wpe"},
      {"output_norm", "transformer.ln_f"},
      {"output", "lm_head"}},
     {"attn_qkv.weight", "ffn_down.weight", "ffn_up.weight", "attn_output.weight"}},
}};

// GGUF_CONFIG_MAPPING's entries shared by these architectures: "<arch>.<key>" -> config key.
const std::array<std::pair<const char*, const char*>, 9> kArchKeys = {{
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"vocab_size", "vocab_size"},
}};

// Its "tokenizer" entry: special token ids go to the config too.
const std::array<std::pair<const char*, const char*>, 4> kTokenizerKeys = {{
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {"tokenizer.ggml.unknown_token_id", "unk_token_id"},
    {"tokenizer.ggml.padding_token_id", "pad_token_id"},
}};

// transformers' names of the tensors llama.cpp's converter names (gguf-py's tensor map for these
// architectures); "blk.N." stands for "model.layers.N.".
const std::array<std::pair<const char*, const char*>, 11> kBlockNames = {{
    {"attn_norm", "input_layernorm"},
    {"ffn_norm", "post_attention_layernorm"},
    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"attn_q_norm", "self_attn.q_norm"},
    {"attn_k_norm", "self_attn.k_norm"},
    {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
}};

const std::array<std::pair<const char*, const char*>, 3> kModelNames = {{
    {"token_embd", "model.embed_tokens"},
    {"output_norm", "model.norm"},
    {"output", "lm_head"},
}};

const char* kExpected =
    "a GGUF file of a llama, qwen2, qwen3, phi3, gemma2, gemma3, stablelm, starcoder2 or gpt2 "
    "model "
    "(as llama.cpp converts them)";

UserError bad_key(const GgufFile& f, const std::string& key, const std::string& what) {
  return UserError("GGUF metadata '" + key + "' " + what, {f.path().string(), 0, 0, key},
                   kExpected);
}

// _gguf_parse_value: numbers, bools and strings as themselves, arrays as lists.
Json to_json(const GgufValue& v) {
  switch (v.kind) {
    case GgufValue::Kind::kUnsigned:
      return v.u;
    case GgufValue::Kind::kSigned:
      return v.i;
    case GgufValue::Kind::kFloat:
      return v.f;
    case GgufValue::Kind::kBool:
      return v.b;
    case GgufValue::Kind::kString:
      return v.s;
    case GgufValue::Kind::kArray: {
      Json a = Json::array();
      for (const auto& i : v.items) a.push_back(to_json(i));
      return a;
    }
  }
  return nullptr;
}

const GgufArch& arch_of(const GgufFile& f) {
  const GgufValue* a = f.find("general.architecture");
  if (!a || a->kind != GgufValue::Kind::kString)
    throw bad_key(f, "general.architecture", a ? "is not a string" : "is missing");
  for (const auto& g : kArchs)
    if (a->s == g.gguf) {
      // load_gguf_checkpoint makes a llama GGUF Mistral when "mistral" is in the list of
      // general.name's values, that is when the name is exactly "mistral"; transformers then has
      // no tensor map for it (gguf-py names no "mistral" architecture) and fails.
      const GgufValue* name = f.find("general.name");
      if (a->s == "llama" && name && name->kind == GgufValue::Kind::kString && name->s == "mistral")
        throw UserError(
            "a llama GGUF named 'mistral' is read by transformers as a Mistral model, which its "
            "GGUF loader cannot map (Unknown gguf model_type: mistral)",
            {f.path().string(), 0, 0, "general.name"},
            "a GGUF whose general.name is not exactly 'mistral' (it then runs as Llama, as in "
            "transformers), or a llama.cpp server (--model gguf)");
      return g;
    }
  // The other architectures transformers 5.23's loader accepts (GGUF_SUPPORTED_ARCHITECTURES and
  // load_gguf_checkpoint's renames): lm-eval runs the first group natively from safetensors but
  // does not map their GGUF tensors yet; the second it has no native implementation of.
  static const std::array<const char*, 5> kNativeElsewhere = {"qwen2moe", "qwen3moe", "gpt-oss",
                                                              "falcon", "bloom"};
  static const std::array<const char*, 8> kTransformersOnly = {
      "lfm2", "t5", "t5encoder", "mamba", "nemotron", "gemma4", "deci", "minimax-m2"};
  auto in = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const char* n) { return a->s == n; });
  };
  std::string why;
  if (in(kNativeElsewhere))
    why =
        " (transformers reads it; lm-eval runs this architecture natively from the Hugging "
        "Face checkpoint, not yet from a GGUF file)";
  else if (in(kTransformersOnly))
    why = " (transformers reads it; lm-eval has no native implementation of this architecture)";
  throw UserError("GGUF architecture '" + a->s + "' is not read natively by lm-eval" + why,
                  {f.path().string(), 0, 0, "general.architecture"},
                  "one of " + gguf_native_architectures() +
                      "; serve other GGUF files with llama.cpp's server and evaluate them with "
                      "--model gguf (or local-completions), or run the Hugging Face checkpoint "
                      "they were converted from");
}

// llama.cpp's converter (LlamaModel.permute) interleaves each head's rotary halves; transformers'
// LlamaTensorProcessor._reverse_permute_weights puts rows h*2d + t*d + i back from h*2d + 2i + t.
void reverse_permute(std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head) {
  if (n_head <= 0 || rows % (2 * n_head) != 0) return;
  const int64_t dim = rows / n_head / 2;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t i = 0; i < dim; ++i)
        std::memcpy(&out[static_cast<size_t>((h * 2 * dim + t * dim + i) * cols)],
                    &w[static_cast<size_t>((h * 2 * dim + 2 * i + t) * cols)],
                    static_cast<size_t>(cols) * sizeof(float));
  w.swap(out);
}

}  // namespace

std::string gguf_native_architectures() {
  std::string out;
  for (const auto& g : kArchs) out += (out.empty() ? "" : ", ") + std::string(g.gguf);
  return out;
}

Json gguf_config_json(const GgufFile& f) {
  const GgufArch& g = arch_of(f);
  Json c = Json::parse(g.defaults);
  c["architectures"] = Json::array({g.hf_arch});
  c["model_type"] = g.model_type;
  auto set = [&](const std::string& key, const std::string& to) {
    const GgufValue* v = f.find(key);
    if (!v) return;
    if (v->kind == GgufValue::Kind::kArray || v->kind == GgufValue::Kind::kString)
      throw bad_key(f, key,
                    "is " +
                        std::string(v->kind == GgufValue::Kind::kArray ? "an array" : "a string") +
                        " where transformers' " + to +
                        " needs a number (per-layer values "
                        "are not read natively)");
    c[to] = to_json(*v);
  };
  const std::string prefix = std::string(g.gguf) + ".";
  for (const auto& [k, to] : kArchKeys)
    if (std::none_of(g.unmapped.begin(), g.unmapped.end(),
                     [&](const char* u) { return std::strcmp(u, k) == 0; }))
      set(prefix + k, to);
  for (const auto& [k, to] : g.keys) set(prefix + k, to);
  if (g.head_dim_from_rope) set(prefix + "rope.dimension_count", "head_dim");
  for (const auto& [k, to] : kTokenizerKeys) set(k, to);
  // load_gguf_checkpoint: tied unless the file has output.weight; the vocabulary's size from the
  // tokenizer's tokens when the architecture's vocab_size is absent.
  if (std::string(g.gguf) == "stablelm") {
    // load_gguf_checkpoint: q/k/v biases when any tensor name holds attn_{q,k,v}.bias, a
    // parallel residual unless one holds ffn_norm (substring tests, as there).
    bool bias = false, ffn_norm = false;
    for (const auto& t : f.tensors()) {
      for (const char* b : {"attn_q.bias", "attn_k.bias", "attn_v.bias"})
        bias = bias || t.name.find(b) != std::string::npos;
      ffn_norm = ffn_norm || t.name.find("ffn_norm") != std::string::npos;
    }
    c["use_qkv_bias"] = bias;
    c["use_parallel_residual"] = !ffn_norm;
  }
  if (g.layer_type_rope && c.contains("rope_theta")) {
    c["rope_parameters"]["full_attention"]["rope_theta"] = c["rope_theta"];
    c.erase("rope_theta");
  }
  c["tie_word_embeddings"] = f.tensor("output.weight") == nullptr;
  if (!c.contains("vocab_size"))
    if (const GgufValue* t = f.find("tokenizer.ggml.tokens");
        t && t->kind == GgufValue::Kind::kArray)
      c["vocab_size"] = t->items.size();
  for (const char* k : {"embedding_length", "block_count", "attention.head_count"})
    if (!f.find(prefix + k))
      throw bad_key(f, prefix + k, "is missing (lm-eval does not guess the model's sizes)");
  if (!c.contains("vocab_size"))
    throw bad_key(f, prefix + "vocab_size", "is missing and so is tokenizer.ggml.tokens");
  return c;
}

GgufTensors::GgufTensors(const std::filesystem::path& path) : file_(path) {
  config_ = gguf_config_json(file_);
  const GgufArch& arch = arch_of(file_);
  arch_ = arch.gguf;
  norm_minus_one_ = arch.norm_minus_one;
  const int64_t layers =
      config_[config_.contains("n_layer") ? "n_layer" : "num_hidden_layers"].get<int64_t>();
  layer_prefix_ = arch.layer_prefix;
  for (const char* t : arch.transposed) transposed_.emplace_back(t);
  for (const auto& t : file_.tensors()) {
    const auto dot = t.name.rfind('.');
    if (dot == std::string::npos) continue;
    const std::string base = t.name.substr(0, dot), suffix = t.name.substr(dot);
    if (suffix != ".weight" && suffix != ".bias") continue;
    std::string hf;
    if (arch.model_names.empty()) {
      for (const auto& [from, to] : kModelNames)
        if (base == from) hf = to;
    } else {
      for (const auto& [from, to] : arch.model_names)
        if (base == from) hf = to;
    }
    if (hf.empty() && base.rfind("blk.", 0) == 0) {
      const auto end = base.find('.', 4);
      const std::string idx =
          base.substr(4, end == std::string::npos ? std::string::npos : end - 4);
      if (end == std::string::npos || idx.empty() || idx.size() > 9 ||
          idx.find_first_not_of("0123456789") != std::string::npos || std::stoll(idx) >= layers)
        continue;
      const std::string block = base.substr(end + 1);
      for (const auto& [from, to] : kBlockNames)
        if (block == from) hf = layer_prefix_ + idx + "." + to;
      for (const auto& [from, to] : arch.block_names)
        if (block == from) hf = layer_prefix_ + idx + "." + to;
    }
    // Tensors transformers has no parameter for (rope_freqs, ...) are skipped, as there.
    if (!hf.empty()) by_hf_name_[hf + suffix] = &t;
  }
}

const TensorView* GgufTensors::find(const std::string& name) const {
  auto it = by_hf_name_.find(name);
  if (it == by_hf_name_.end()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto m = made_.find(name); m != made_.end()) return &m->second;
  const GgufTensorInfo& t = *it->second;
  if (!t.type->dequantizable)
    throw UserError("tensor '" + t.name + "' has ggml type " + t.type->name +
                        ", which lm-eval does not dequantise",
                    {file_.path().string(), 0, 0, t.name},
                    "tensors of type " + dequantizable_type_names() +
                        "; serve this file with llama.cpp's server and evaluate it with --model "
                        "gguf (or local-completions)");
  auto values = std::make_shared<std::vector<float>>(static_cast<size_t>(t.numel()));
  dequantize(*t.type, t.data, values->data(), t.numel());
  file_.release(t);
  TensorView v;
  v.name = name;
  v.dtype = "F32";
  for (auto d = t.ne.rbegin(); d != t.ne.rend(); ++d) v.shape.push_back(*d);
  // LlamaTensorProcessor: ".attn_q." / ".attn_k." tensors (weights and biases) of the llama
  // architecture, with the query heads and the key-value heads.
  if (arch_ == "llama" && config_.contains("num_attention_heads") &&
      config_.contains("num_key_value_heads")) {
    const bool q = t.name.find(".attn_q.") != std::string::npos;
    const bool k = t.name.find(".attn_k.") != std::string::npos;
    if (q || k) {
      const int64_t heads =
          config_[q ? "num_attention_heads" : "num_key_value_heads"].get<int64_t>();
      const int64_t rows = v.shape[0];
      reverse_permute(*values, rows, t.numel() / std::max<int64_t>(rows, 1), heads);
    }
  }
  // GPT2TensorProcessor: weights.T for the names holding these (substring tests, as there).
  if (v.shape.size() == 2 &&
      std::any_of(transposed_.begin(), transposed_.end(),
                  [&](const std::string& n) { return t.name.find(n) != std::string::npos; })) {
    const int64_t rows = v.shape[0], cols = v.shape[1];
    std::vector<float> out(values->size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[static_cast<size_t>(c * rows + r)] = (*values)[static_cast<size_t>(r * cols + c)];
    values->swap(out);
    std::swap(v.shape[0], v.shape[1]);
  }
  if (norm_minus_one_ && t.name.find("norm.weight") != std::string::npos)
    for (float& x : *values) x -= 1.0f;
  v.data = reinterpret_cast<const std::byte*>(values->data());
  v.nbytes = values->size() * sizeof(float);
  v.file = file_.path().string();
  v.owner = std::move(values);
  return &made_.emplace(name, std::move(v)).first->second;
}

std::vector<std::string> GgufTensors::names() const {
  std::vector<std::string> out;
  out.reserve(by_hf_name_.size());
  for (const auto& [k, v] : by_hf_name_) out.push_back(k);
  return out;
}

void GgufTensors::release(const TensorView& t) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto m = made_.find(t.name); m != made_.end() && &m->second == &t) made_.erase(m);
}

}  // namespace lmeval::hf

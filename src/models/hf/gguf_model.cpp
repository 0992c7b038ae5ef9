// transformers' reading of a GGUF (modeling_gguf_pytorch_utils.load_gguf_checkpoint with
// integrations/ggml.py's GGUF_CONFIG_MAPPING and its TensorProcessors) for the architectures
// lm-eval runs natively from a GGUF.
#include "models/hf/gguf_model.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/transformers_path.hpp"

namespace lmeval::hf {

// modeling_gguf_pytorch_utils.TENSOR_PROCESSORS: what transformers does to a tensor after
// dequantising it, by the file's architecture.
enum class GgufProcessor {
  kNone,
  kLlama,     // LlamaTensorProcessor: attn_q / attn_k rows un-permuted
  kGemma2,    // Gemma2TensorProcessor: one taken off every "*norm.weight"
  kGpt2,      // GPT2TensorProcessor: Conv1D weights transposed back
  kBloom,     // BloomTensorProcessor: attn_qkv's rows back to per-head [q, k, v]
  kQwen2Moe,  // Qwen2MoeTensorProcessor: the shared expert's gate made (1, hidden)
};

struct GgufArch {
  const char* gguf;        // general.architecture
  const char* model_type;  // config.json's
  const char* hf_arch;     // architectures[0]
  // GGUF_CONFIG_MAPPING maps rope.dimension_count to head_dim for llama only (the other
  // architectures' entry is None: ignored).
  bool head_dim_from_rope = false;
  // The config class's defaults for keys the metadata may leave out (transformers builds the
  // config class from the mapped keys alone).
  const char* defaults = "{}";
  // Block tensors whose transformers name differs from kBlockNames' (gguf-py's tensor map of the
  // architecture): "ffn_up" is Phi-3's fused gate_up_proj.
  std::vector<std::pair<const char*, const char*>> block_names = {};
  // GGUF_CONFIG_MAPPING's keys of this architecture beyond kArchKeys.
  std::vector<std::pair<const char*, const char*>> keys = {};
  GgufProcessor processor = GgufProcessor::kNone;
  // Gemma3TextConfig keeps rope_theta as rope_parameters.full_attention's (the sliding layers
  // keep their 10000): rope.freq_base goes there.
  bool layer_type_rope = false;
  // kArchKeys' entries this architecture's mapping leaves out (StableLM's has no rope.freq_base
  // and no RMS epsilon: a file's values there are ignored, as there).
  std::vector<const char*> unmapped = {};
  // The base model's layout when it is not "model.": the layers' prefix and the top-level
  // names (kModelNames otherwise).
  const char* layer_prefix = "model.layers.";
  std::vector<std::pair<const char*, const char*>> model_names = {};
  // Block tensors ("attn_qkv.bias") the model transformers builds has no parameter for:
  // get_gguf_hf_weights_map maps nothing to them, so they are skipped.
  std::vector<const char*> no_parameter = {};
  // qwen2moe / qwen3moe: 3-D expert tensors (ffn_{gate,up,down}_exps) as transformers 5's
  // fused Qwen2MoeExperts parameters mlp.experts.gate_up_proj / down_proj.
  bool fused_experts = false;
};

namespace {

// The top-level names of models whose base is "transformer." (GPT-2, Falcon, BLOOM).
const std::vector<std::pair<const char*, const char*>> kTransformerNames = {
    {"token_embd", "transformer.word_embeddings"},
    {"token_embd_norm", "transformer.word_embeddings_layernorm"},
    {"output_norm", "transformer.ln_f"},
    {"output", "lm_head"}};
// Falcon's and BLOOM's blocks (gguf-py's map of their HF names).
const std::vector<std::pair<const char*, const char*>> kFalconBlocks = {
    {"attn_qkv", "self_attention.query_key_value"},
    {"attn_output", "self_attention.dense"},
    {"ffn_up", "mlp.dense_h_to_4h"},
    {"ffn_down", "mlp.dense_4h_to_h"}};

// The experts and shared expert of a qwen2moe / qwen3moe block (gguf-py's tensor map and
// Qwen2MoeTensorProcessor): the router and shared expert as tensors of their own; gate_exps and
// up_exps ([experts, moe_intermediate, hidden] each) become one gate_up_proj (fused_experts).
const std::vector<std::pair<const char*, const char*>> kMoeBlocks = {
    {"ffn_gate_inp", "mlp.gate"},
    {"ffn_gate_shexp", "mlp.shared_expert.gate_proj"},
    {"ffn_up_shexp", "mlp.shared_expert.up_proj"},
    {"ffn_down_shexp", "mlp.shared_expert.down_proj"},
    {"ffn_gate_inp_shexp", "mlp.shared_expert_gate"}};

// LlamaConfig, Qwen2Config, Qwen3Config, Phi3Config, ... of transformers 5.23. Qwen3Config's
// head_dim is 128 whatever hidden_size / num_attention_heads is, and no metadata key maps to it
// for qwen3.
const std::array<GgufArch, 13> kArchs = {{
    {.gguf = "llama",
     .model_type = "llama",
     .hf_arch = "LlamaForCausalLM",
     .head_dim_from_rope = true,
     .defaults = R"({"max_position_embeddings": 2048, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu"})",
     .processor = GgufProcessor::kLlama},
    {.gguf = "qwen2",
     .model_type = "qwen2",
     .hf_arch = "Qwen2ForCausalLM",
     .defaults = R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "use_sliding_window": false, "hidden_act": "silu"})"},
    // Qwen2MoeConfig's defaults (qkv biases, every layer sparse, norm_topk_prob False); the expert
    // sizes are the file's (gguf_config_json), where transformers keeps these defaults.
    {.gguf = "qwen2moe",
     .model_type = "qwen2_moe",
     .hf_arch = "Qwen2MoeForCausalLM",
     .defaults = R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "use_sliding_window": false, "hidden_act": "silu",
         "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
         "num_experts_per_tok": 4, "num_experts": 60, "norm_topk_prob": false,
         "decoder_sparse_step": 1, "mlp_only_layers": [], "qkv_bias": true})",
     .block_names = kMoeBlocks,
     .keys = {{"expert_count", "num_experts"}, {"expert_used_count", "num_experts_per_tok"}},
     .processor = GgufProcessor::kQwen2Moe,
     .fused_experts = true},
    // Qwen3MoeConfig's defaults, but norm_topk_prob True (GGUF_CONFIG_DEFAULTS_MAPPING: llama.cpp
    // renormalises the top k, as Qwen3-30B-A3B's config.json says); head_dim from
    // attention.key_length.
    {.gguf = "qwen3moe",
     .model_type = "qwen3_moe",
     .hf_arch = "Qwen3MoeForCausalLM",
     .defaults = R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "use_sliding_window": false, "hidden_act": "silu",
         "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128,
         "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [],
         "attention_bias": false})",
     .block_names = kMoeBlocks,
     .keys = {{"attention.key_length", "head_dim"},
              {"expert_count", "num_experts"},
              {"expert_used_count", "num_experts_per_tok"}},
     .processor = GgufProcessor::kQwen2Moe,
     .fused_experts = true},
    {.gguf = "qwen3",
     .model_type = "qwen3",
     .hf_arch = "Qwen3ForCausalLM",
     .defaults = R"({"max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "use_sliding_window": false, "head_dim": 128,
         "hidden_act": "silu"})"},
    // llama.cpp's Phi-3 files keep the fused projections; rope_factors_long/short (LongRoPE)
    // have no transformers parameter and no config key maps to rope scaling: plain RoPE, as there.
    {.gguf = "phi3",
     .model_type = "phi3",
     .hf_arch = "Phi3ForCausalLM",
     .defaults = R"({"max_position_embeddings": 4096, "original_max_position_embeddings": 4096,
         "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "bos_token_id": 1,
         "eos_token_id": 32000, "pad_token_id": 32000, "hidden_act": "silu",
         "sliding_window": null})",
     .block_names = {{"attn_qkv", "self_attn.qkv_proj"}, {"ffn_up", "mlp.gate_up_proj"}}},
    // Gemma2Config's defaults: no metadata key maps to the soft-capping or query_pre_attn_scalar
    // (llama.cpp writes gemma2.attn_logit_softcapping, which transformers does not read).
    {.gguf = "gemma2",
     .model_type = "gemma2",
     .hf_arch = "Gemma2ForCausalLM",
     .defaults = R"({"max_position_embeddings": 8192, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
         "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2, "query_pre_attn_scalar": 256,
         "sliding_window": 4096, "final_logit_softcapping": 30.0,
         "attn_logit_softcapping": 50.0, "attention_bias": false})",
     .block_names = {{"post_attention_norm", "post_attention_layernorm"},
                     {"ffn_norm", "pre_feedforward_layernorm"},
                     {"post_ffw_norm", "post_feedforward_layernorm"}},
     .keys = {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}},
     .processor = GgufProcessor::kGemma2},
    // load_gguf_checkpoint makes a gemma3 file's model_type gemma3_text (its text backbone);
    // Gemma3TextConfig's defaults: five sliding layers to one global, query_pre_attn_scalar 256,
    // no soft-capping. Gemma2TensorProcessor takes the one off every norm, q/k norms included.
    {.gguf = "gemma3",
     .model_type = "gemma3_text",
     .hf_arch = "Gemma3ForCausalLM",
     .defaults = R"({"max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "head_dim": 256,
         "hidden_activation": "gelu_pytorch_tanh", "pad_token_id": 0, "eos_token_id": 1,
         "bos_token_id": 2, "query_pre_attn_scalar": 256, "sliding_window": 4096,
         "sliding_window_pattern": 6, "final_logit_softcapping": null,
         "attn_logit_softcapping": null, "attention_bias": false,
         "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                             "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}}})",
     .block_names = {{"post_attention_norm", "post_attention_layernorm"},
                     {"ffn_norm", "pre_feedforward_layernorm"},
                     {"post_ffw_norm", "post_feedforward_layernorm"}},
     .keys = {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}},
     .processor = GgufProcessor::kGemma2,
     .layer_type_rope = true},
    // StableLmConfig's defaults; load_gguf_checkpoint sets use_qkv_bias and
    // use_parallel_residual from the tensors (gguf_config_json). No key maps to qk_layernorm.
    {.gguf = "stablelm",
     .model_type = "stablelm",
     .hf_arch = "StableLmForCausalLM",
     .defaults = R"({"max_position_embeddings": 4096, "layer_norm_eps": 1e-05,
         "hidden_act": "silu",
         "rope_parameters": {"rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                             "rope_type": "default"},
         "qk_layernorm": false, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": null})",
     .keys = {{"attention.layer_norm_epsilon", "layer_norm_eps"}},
     .unmapped = {"rope.freq_base", "attention.layer_norm_rms_epsilon"}},
    // Starcoder2Config's defaults (no sliding window unless config.json says so); the mapping
    // has no vocab_size: the vocabulary's size comes from tokenizer.ggml.tokens.
    {.gguf = "starcoder2",
     .model_type = "starcoder2",
     .hf_arch = "Starcoder2ForCausalLM",
     .defaults = R"({"max_position_embeddings": 4096, "norm_epsilon": 1e-05,
         "hidden_act": "gelu_pytorch_tanh", "rope_theta": 10000.0, "use_bias": true,
         "sliding_window": null, "bos_token_id": 50256, "eos_token_id": 50256,
         "pad_token_id": null})",
     .block_names = {{"ffn_up", "mlp.c_fc"}, {"ffn_down", "mlp.c_proj"}},
     .keys = {{"attention.layer_norm_epsilon", "norm_epsilon"}},
     .unmapped = {"rope.freq_base", "attention.layer_norm_rms_epsilon", "vocab_size"}},
    // GPT2Config's defaults: the mapping's n_ctx and feed_forward_length are no GPT2Config fields
    // (n_positions stays 1024, n_inner None: 4 * n_embd), the vocabulary's size from the tokens.
    {.gguf = "gpt2",
     .model_type = "gpt2",
     .hf_arch = "GPT2LMHeadModel",
     .defaults = R"({"n_positions": 1024, "n_inner": null, "activation_function": "gelu_new",
         "layer_norm_epsilon": 1e-05, "bos_token_id": 50256, "eos_token_id": 50256})",
     .block_names = {{"attn_norm", "ln_1"},
                     {"ffn_norm", "ln_2"},
                     {"attn_qkv", "attn.c_attn"},
                     {"attn_output", "attn.c_proj"},
                     {"ffn_up", "mlp.c_fc"},
                     {"ffn_down", "mlp.c_proj"}},
     .keys = {{"block_count", "n_layer"},
              {"context_length", "n_ctx"},
              {"embedding_length", "n_embd"},
              {"feed_forward_length", "feed_forward_length"},
              {"attention.head_count", "n_head"},
              {"attention.layer_norm_epsilon", "layer_norm_epsilon"}},
     .processor = GgufProcessor::kGpt2,
     .unmapped = {"context_length", "block_count", "feed_forward_length", "embedding_length",
                  "rope.freq_base", "attention.head_count", "attention.head_count_kv",
                  "attention.layer_norm_rms_epsilon", "vocab_size"},
     .layer_prefix = "transformer.h.",
     .model_names = {{"token_embd", "transformer.wte"},
                     {"position_embd", "transformer.wpe"},
                     {"output_norm", "transformer.ln_f"},
                     {"output", "lm_head"}}},
    // FalconConfig's defaults are all transformers has of the layout: no key maps to
    // new_decoder_architecture, num_kv_heads or ffn_hidden_size (intermediate_size,
    // num_key_value_heads and rms_norm_eps land on no FalconConfig field), so a file is read as
    // Falcon-7B's: multi-query, attention parallel to the MLP from one norm, an MLP of
    // 4 * hidden_size, bias False (the linear layers' biases a file holds are dropped).
    // Falcon-40B/180B files are refused in gguf_config_json.
    {.gguf = "falcon",
     .model_type = "falcon",
     .hf_arch = "FalconForCausalLM",
     .defaults = R"({"max_position_embeddings": 2048, "layer_norm_epsilon": 1e-05,
         "rope_theta": 10000.0, "bos_token_id": 11, "eos_token_id": 11, "multi_query": true,
         "new_decoder_architecture": false, "parallel_attn": true, "bias": false,
         "alibi": false, "activation": "gelu"})",
     .block_names = kFalconBlocks,
     .layer_prefix = "transformer.h.",
     .model_names = kTransformerNames,
     .no_parameter = {"attn_qkv.bias", "attn_output.bias", "ffn_up.bias", "ffn_down.bias"}},
    // BloomConfig's defaults (apply_residual_connection_post_layernorm False); the mapping has
    // no context length (BloomConfig has none).
    {.gguf = "bloom",
     .model_type = "bloom",
     .hf_arch = "BloomForCausalLM",
     .defaults = R"({"layer_norm_epsilon": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
         "apply_residual_connection_post_layernorm": false})",
     .block_names = kFalconBlocks,
     .keys = {{"block_count", "n_layer"},
              {"attention.head_count", "n_head"},
              {"attention.layer_norm_epsilon", "layer_norm_epsilon"}},
     .processor = GgufProcessor::kBloom,
     .unmapped = {"context_length", "block_count", "feed_forward_length", "rope.freq_base",
                  "attention.head_count", "attention.head_count_kv",
                  "attention.layer_norm_rms_epsilon"},
     .layer_prefix = "transformer.h.",
     .model_names = kTransformerNames},
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
    "a GGUF file of a llama, qwen2, qwen2moe, qwen3, qwen3moe, phi3, gemma2, gemma3, stablelm, "
    "starcoder2, gpt2, falcon or bloom model (as llama.cpp converts them)";

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
  // load_gguf_checkpoint's renames), each with why lm-eval does not read it natively.
  static const std::array<std::pair<const char*, const char*>, 6> kRefused = {{
      {"gpt-oss",
       "transformers 5.23 loads no experts and no attention sinks from it: its "
       "GptOssTensorProcessor names tensors its GptOss model does not have, so those weights "
       "are newly initialised; lm-eval runs gpt_oss natively from the Hugging Face checkpoint"},
      {"t5",
       "transformers 5.23 reads it as a T5 of gated ReLU (dense_act_fn relu, where Flan-T5's is "
       "gated GELU) and relative_attention_max_distance 128 whatever the checkpoint had, so the "
       "reference's numbers are not the model's; lm-eval runs T5 natively from the Hugging Face "
       "checkpoint (backend seq2seq)"},
      {"t5encoder", "an encoder alone (T5EncoderModel), with no language-model head to score"},
      {"mistral",
       "transformers 5.23 cannot load it either: gguf-py has no 'mistral' tensor map (llama.cpp "
       "writes Mistral models as 'llama')"},
      {"deci", "transformers 5.23 cannot load it either: it has no 'deci' model class"},
      {"falcon-h1", "transformers 5.23's GGUF loader does not read it"},
  }};
  std::string why;
  for (const auto& [name, reason] : kRefused)
    if (a->s == name) why = std::string(" (") + reason + ")";
  // lm-eval sends these through transformers before the plugin is opened (transformers_path.hpp);
  // only a direct load reaches here.
  if (gguf_runs_through_transformers(a->s))
    why =
        " (transformers reads it; lm-eval has no native implementation of this architecture and "
        "runs such a file through transformers)";
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

// llama.cpp's BloomModel stores query_key_value as [q heads; k heads; v heads];
// BloomTensorProcessor._reverse_reshape_weights / _bias put each head's [q, k, v] rows back
// together. Rows of cols values (a weight's hidden_size, a bias's one).
void bloom_qkv(const std::string& file, const GgufTensorInfo& t, std::vector<float>& w,
               int64_t n_head, int64_t n_embed) {
  const auto total = static_cast<int64_t>(w.size());
  if (n_head <= 0 || n_embed % n_head != 0 || total % (3 * n_embed) != 0)
    throw UserError("tensor '" + t.name + "' has " + std::to_string(total) +
                        " values, which BLOOM's fused query_key_value of hidden_size " +
                        std::to_string(n_embed) + " and " + std::to_string(n_head) +
                        " heads cannot hold",
                    {file, 0, 0, t.name}, "3 * hidden_size rows of hidden_size values (or a bias)");
  const int64_t cols = total / (3 * n_embed), dim = n_embed / n_head;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t part = 0; part < 3; ++part)
      std::memcpy(&out[static_cast<size_t>((h * 3 + part) * dim * cols)],
                  &w[static_cast<size_t>((part * n_head + h) * dim * cols)],
                  static_cast<size_t>(dim * cols) * sizeof(float));
  w.swap(out);
}

// The expert sizes of a qwen2moe / qwen3moe file, from its first layer's tensors. transformers
// maps no key to moe_intermediate_size or shared_expert_intermediate_size and keeps its config
// class's defaults (files of other sizes fail there with a size mismatch); lm-eval takes the
// file's (docs/fidelity.md), checked against the metadata llama.cpp writes where present.
void moe_sizes(const GgufFile& f, const std::string& prefix, Json& c) {
  auto dims = [&](const std::string& name, size_t rank) {
    const GgufTensorInfo* t = f.tensor(name);
    if (!t)
      throw UserError("tensor '" + name + "' is missing", {f.path().string(), 0, 0, name},
                      "a " + prefix.substr(0, prefix.size() - 1) +
                          " GGUF whose blocks hold the experts as llama.cpp writes them "
                          "(ffn_gate_exps, ffn_up_exps, ffn_down_exps, ffn_gate_inp" +
                          (prefix == "qwen2moe." ? ", and the shared expert's *_shexp" : "") + ")");
    if (t->ne.size() != rank)
      throw UserError("tensor '" + name + "' has " + std::to_string(t->ne.size()) +
                          " dimensions where " + std::to_string(rank) + " were expected",
                      {f.path().string(), 0, 0, name},
                      rank == 3 ? "[experts, expert size, hidden size] (gguf-py's order reversed)"
                                : "[shared expert size, hidden size]");
    return t->ne;
  };
  auto agree = [&](const std::string& key, int64_t from_tensor, const std::string& tensor) {
    const GgufValue* v = f.find(prefix + key);
    if (!v) return;
    const Json j = to_json(*v);
    if (!j.is_number_integer() || j.get<int64_t>() != from_tensor)
      throw bad_key(
          f, prefix + key,
          "is " + j.dump() + " but tensor '" + tensor + "' holds " + std::to_string(from_tensor));
  };
  const std::vector<int64_t> gate = dims("blk.0.ffn_gate_exps.weight", 3);
  agree("expert_feed_forward_length", gate[1], "blk.0.ffn_gate_exps.weight");
  agree("expert_count", gate[2], "blk.0.ffn_gate_exps.weight");
  c["moe_intermediate_size"] = gate[1];
  c["num_experts"] = gate[2];
  if (prefix == "qwen2moe.") {
    const std::vector<int64_t> shared = dims("blk.0.ffn_up_shexp.weight", 2);
    agree("expert_shared_feed_forward_length", shared[1], "blk.0.ffn_up_shexp.weight");
    c["shared_expert_intermediate_size"] = shared[1];
  }
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
  if (std::string(g.gguf) == "falcon") {
    // FalconConfig's multi_query layout has one key-value head: transformers fails on a
    // Falcon-40B/180B file's attn_qkv (its size mismatch), since no key maps to
    // new_decoder_architecture or num_kv_heads.
    if (c.contains("num_key_value_heads") && c["num_key_value_heads"] != 1)
      throw UserError(
          "a falcon GGUF with " + c["num_key_value_heads"].dump() +
              " key-value heads (Falcon-40B/180B) is read by transformers 5.23 as Falcon-7B's "
              "multi-query layout, which has one, and fails on its attn_qkv tensors",
          {f.path().string(), 0, 0, "falcon.attention.head_count_kv"},
          "a falcon GGUF of one key-value head (Falcon-7B's layout), or the Hugging Face "
          "checkpoint, which lm-eval runs natively");
  }
  if (g.fused_experts) moe_sizes(f, prefix, c);
  if (g.layer_type_rope && c.contains("rope_theta")) {
    c["rope_parameters"]["full_attention"]["rope_theta"] = c["rope_theta"];
    c.erase("rope_theta");
  }
  // load_gguf_checkpoint ties falcon and bloom whatever the file holds (its "exceptions"), and
  // HFLM._create_model's tie_weights() then makes lm_head the embeddings even where
  // from_pretrained kept a different output.weight.
  c["tie_word_embeddings"] = f.tensor("output.weight") == nullptr ||
                             std::string(g.gguf) == "falcon" || std::string(g.gguf) == "bloom";
  // load_gguf_checkpoint: the vocabulary's size from the tokenizer's tokens when the
  // architecture's vocab_size is absent.
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
  arch_ = &arch;
  const int64_t layers =
      config_[config_.contains("n_layer") ? "n_layer" : "num_hidden_layers"].get<int64_t>();
  const std::string layer_prefix = arch.layer_prefix;
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
      if (arch.fused_experts && suffix == ".weight") {
        // Qwen2MoeTensorProcessor: parameters of no ".weight" suffix, gate and up in one.
        const std::string experts = layer_prefix + idx + ".mlp.experts.";
        if (block == "ffn_down_exps") by_hf_name_[experts + "down_proj"] = &t;
        if (block == "ffn_gate_exps") by_hf_name_[experts + "gate_up_proj"] = &t;
        if (block == "ffn_up_exps") up_of_[experts + "gate_up_proj"] = &t;
        if (block.find("_exps") != std::string::npos) continue;
      }
      for (const auto& [from, to] : kBlockNames)
        if (block == from) hf = layer_prefix + idx + "." + to;
      for (const auto& [from, to] : arch.block_names)
        if (block == from) hf = layer_prefix + idx + "." + to;
      for (const char* n : arch.no_parameter)
        if (block + suffix == n) hf.clear();
    }
    // Tensors transformers has no parameter for (rope_freqs, ...) are skipped, as there.
    if (!hf.empty()) by_hf_name_[hf + suffix] = &t;
  }
}

// TENSOR_PROCESSORS' process() of the file's architecture on one dequantised tensor (substring
// tests on the GGUF name, as there).
void GgufTensors::process(const GgufTensorInfo& t, TensorView& v, std::vector<float>& w) const {
  auto has = [&](const char* part) { return t.name.find(part) != std::string::npos; };
  auto num = [&](const char* key) { return config_.at(key).get<int64_t>(); };
  const int64_t rows = v.shape[0], cols = t.numel() / std::max<int64_t>(rows, 1);
  switch (arch_->processor) {
    case GgufProcessor::kLlama:
      // With the query heads for ".attn_q.", the key-value heads for ".attn_k." (weights and
      // biases); nothing when the config lacks either count.
      if ((has(".attn_q.") || has(".attn_k.")) && config_.contains("num_attention_heads") &&
          config_.contains("num_key_value_heads"))
        reverse_permute(w, rows, cols,
                        num(has(".attn_q.") ? "num_attention_heads" : "num_key_value_heads"));
      break;
    case GgufProcessor::kGemma2:
      if (has("norm.weight"))
        for (float& x : w) x -= 1.0f;
      break;
    case GgufProcessor::kGpt2:
      if (v.shape.size() == 2 && (has("attn_qkv.weight") || has("ffn_down.weight") ||
                                  has("ffn_up.weight") || has("attn_output.weight"))) {
        std::vector<float> out(w.size());
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            out[static_cast<size_t>(c * rows + r)] = w[static_cast<size_t>(r * cols + c)];
        w.swap(out);
        std::swap(v.shape[0], v.shape[1]);
      }
      break;
    case GgufProcessor::kBloom:
      if (has("attn_qkv"))
        bloom_qkv(file_.path().string(), t, w, num("n_head"), num("hidden_size"));
      break;
    case GgufProcessor::kQwen2Moe:
      // llama.cpp writes the shared expert's gate as a vector; transformers' is (1, hidden).
      if (has("ffn_gate_inp_shexp") && v.shape.size() == 1) v.shape.insert(v.shape.begin(), 1);
      break;
    case GgufProcessor::kNone:
      break;
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
  process(t, v, *values);
  if (auto up = up_of_.find(name); up != up_of_.end()) fuse_up(*up->second, v, *values);
  v.data = reinterpret_cast<const std::byte*>(values->data());
  v.nbytes = values->size() * sizeof(float);
  v.file = file_.path().string();
  v.owner = std::move(values);
  return &made_.emplace(name, std::move(v)).first->second;
}

// Qwen2MoeTensorProcessor._set_moe_expert_tensor: gate_up_proj [experts, 2 * size, hidden], each
// expert's gate rows then its up rows.
void GgufTensors::fuse_up(const GgufTensorInfo& up, TensorView& v, std::vector<float>& w) const {
  const std::vector<int64_t> want(v.shape.rbegin(), v.shape.rend());
  if (up.ne != want)
    throw UserError("tensor '" + up.name + "' is not of the shape of its ffn_gate_exps",
                    {file_.path().string(), 0, 0, up.name},
                    "[experts, expert size, hidden size] as the layer's ffn_gate_exps");
  if (!up.type->dequantizable)
    throw UserError("tensor '" + up.name + "' has ggml type " + up.type->name +
                        ", which lm-eval does not dequantise",
                    {file_.path().string(), 0, 0, up.name},
                    "tensors of type " + dequantizable_type_names());
  std::vector<float> u(static_cast<size_t>(up.numel()));
  dequantize(*up.type, up.data, u.data(), up.numel());
  file_.release(up);
  const auto experts = static_cast<size_t>(v.shape[0]);
  const size_t block = w.size() / experts;
  std::vector<float> out(2 * w.size());
  for (size_t e = 0; e < experts; ++e) {
    std::memcpy(&out[2 * e * block], &w[e * block], block * sizeof(float));
    std::memcpy(&out[(2 * e + 1) * block], &u[e * block], block * sizeof(float));
  }
  w.swap(out);
  v.shape[1] *= 2;
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

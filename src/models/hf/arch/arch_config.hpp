// The description of one model as the shared blocks run it: which norm, attention, MLP (dense,
// gated or mixture-of-experts) and residual wiring its layers use, and their sizes. An
// architecture file (arch/<name>.cpp) fills it from config.json; both forward passes read only
// this. Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::hf {

enum class NormKind { kRms, kLayerNorm };
// ACT2FN's functions (activation.hpp): kGeluTanh is gelu_pytorch_tanh (torch's fused kernel);
// kGeluNew, kGeluFast and kGeluBloom are the Python formulas of gelu_new, gelu_fast and Bloom.
enum class Activation { kSilu, kGeluTanh, kGeluExact, kRelu, kGeluNew, kGeluFast, kGeluBloom };
// transformers' rope_type values. kDynamic and kLongRope pick their frequencies from a sequence's
// length (rope.hpp).
enum class RopeType { kNone, kDefault, kLinear, kLlama3, kYarn, kDynamic, kLongRope };
// Where q and k are normalised before the rotary embedding: per head over head_dim with one
// weight for all heads (Qwen3 RMS, Phi LayerNorm) or a weight per head (StableLM, Cohere), or
// over the whole projection of all heads (OLMo2); or an L2 norm without weights of each head
// after the rotary embedding, on the rotary layers only (Llama 4).
enum class QkNorm { kNone, kPerHead, kPerHeadWeights, kWhole, kL2AfterRope };

// The router of a mixture-of-experts MLP: transformers' sparse MoE blocks (Mixtral, Qwen MoE,
// OLMoE: softmax of logits in the model dtype, top k, optional renormalisation), DeepSeek-V2's
// (float32 logits, softmax, greedy or group-limited top k, routed_scaling_factor) and
// DeepSeek-V3's (float32 logits, sigmoid scores, choice by scores + e_score_correction_bias within
// the best groups, weights from the scores, optional renormalisation, routed_scaling_factor).
// Llama 4's (logits in the model dtype, top k, sigmoid of the chosen logits, which scale each
// expert's input rather than its output). GPT-OSS's (the top k of the logits of a router with a
// bias, softmax over those k in the model dtype).
enum class MoeRouter { kSoftmax, kDeepseekV2, kDeepseekV3, kLlama4, kTopkSoftmax };
// ALiBi (alibi.hpp): a per-head bias slope·(key position) joins the scaled q·k, in the form each
// family builds it: the key's position (BLOOM), the same rounded through bfloat16 and divided by
// √head_dim (Falcon), or the key's distance to the last key (MPT).
enum class Alibi { kNone, kKeyPosition, kKeyPositionBf16, kFromLastKey };

// A mixture-of-experts MLP (the shared block of models/hf/moe.hpp): a linear router, the top k
// experts of each token, each a gated MLP of `expert_intermediate`, and optionally one shared
// expert added to every token.
struct MoeConfig {
  int64_t num_experts = 0;  // 0 = the layer's MLP is dense
  int64_t top_k = 0;
  int64_t expert_intermediate = 0;
  // Renormalise the top-k softmax weights to sum to one (Mixtral always; Qwen MoE and OLMoE by
  // norm_topk_prob).
  bool norm_topk_prob = false;
  int64_t shared_intermediate = 0;  // Qwen2-MoE's shared expert, 0 = none
  bool shared_gate = false;         // the shared expert scaled by sigmoid(shared_expert_gate(x))
  // How a token's experts and their weights are chosen (moe_router.cpp).
  MoeRouter router = MoeRouter::kSoftmax;
  bool group_limited = false;           // DeepSeek-V2 topk_method group_limited_greedy
  int64_t n_group = 1, topk_group = 1;  // DeepSeek's expert groups, topk_group of them kept
  double routed_scaling_factor = 1.0;   // DeepSeek: the chosen weights times this
  // > 0: GPT-OSS's clamped SwiGLU instead of the activation: gate clamped above at the limit, up
  // to [-limit, limit], (up + 1)·gate·sigmoid(alpha·gate). Expert biases load when present.
  double swiglu_limit = 0.0;
  double swiglu_alpha = 1.702;
  // GPT-OSS's quantization_config quant_method mxfp4: the experts' weights are stored as MXFP4
  // blocks and scales (gate_up_proj_blocks, ...), dequantised at load (weight_loader.cpp).
  bool mxfp4 = false;
  // The router's weights stay float32 (MixtralTopKRouter), so an expert's output times its
  // weight is float32 before the top-k sum; else they are in the model dtype.
  bool float32_weights = false;
  // The experts' weights are stored [in, out] (GPT-OSS: is_transposed; Llama 4), which sets the
  // order of the products' sums in float16/bfloat16 (half_gemm.hpp).
  bool transposed_experts = false;
};

// Multi-head latent attention (DeepSeek-V2/V3; mla.cpp): queries from q_proj, or through a
// low-rank bottleneck (q_a_proj, RMS norm, q_b_proj); keys and values expanded by kv_b_proj from
// one normalised latent per token, beside one rotary key part all heads share. A head's query
// and key are [nope | rope] (qk_nope + qk_rope wide), its value v_head_dim wide; the rotary
// embedding turns the rope part only (rotary_dim = qk_rope_head_dim). ArchConfig::head_dim is
// the attention core's head width, max(qk, v): the CPU scoring pass pads the narrower with zeros,
// which leave every product unchanged.
struct MlaConfig {
  int64_t kv_lora_rank = 0;  // 0 = not MLA
  int64_t q_lora_rank = 0;   // 0 = a plain q_proj
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  double lora_norm_eps = 1e-6;  // q_a_layernorm, kv_a_layernorm: DeepseekV2RMSNorm's default eps
  bool enabled() const { return kv_lora_rank > 0; }
  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

// What distinguishes one architecture from another, as configuration of the shared blocks.
// How a family's attention rounds in float16/bfloat16 (transformer_impl.hpp,
// reduced_attention.cpp).
enum class AttnImpl {
  kSdpa,   // torch's scaled_dot_product_attention (its CPU flash kernel)
  kEager,  // q·k, scale, bias and p·v each rounded; softmax in float32 (Gemma 2, MPT)
  kEagerFloat32Scores,  // GPT-J's _attn: q and k cast to float32, scores and softmax in float32
  kEagerFusedBias,      // BLOOM's baddbmm: bias + scale·(q·k) rounded once
};

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

  // ----- norms and the residual wiring of a block (block.hpp) -----
  NormKind norm = NormKind::kRms;
  bool norm_plus_one = false;  // Gemma: x·(1 + w), all in float32
  // RMS norm weight applied in float32, then rounded once (OLMo 2/3, GPT-OSS: (w·x).to(dtype));
  // else the normed x is rounded first and the weight multiplies it in the model dtype (Llama).
  bool norm_weight_in_float32 = false;
  double norm_eps = 1e-5;
  bool norm_bias = true;  // LayerNorms with a bias (Cohere's have none)
  // LayerNorm as CohereLayerNorm's formula (mean, then mean of squared deviations, in float32)
  // rather than F.layer_norm: the two round differently in float16/bfloat16.
  bool layer_norm_formula = false;
  bool pre_norm = true;            // a norm before each branch (OLMo2 has none: branch norms only)
  bool parallel_residual = false;  // x + attn(ln1 x) + mlp(ln2 x) (NeoX) or one shared norm (Phi)
  bool shared_layer_norm = false;  // Phi: one input_layernorm feeds attention and MLP
  // The parallel branches' sum: (x + attn) + mlp (Cohere), else (attn + mlp) + x (NeoX, GPT-J,
  // Phi, Falcon); the order shows in float16/bfloat16 (the ATen path).
  bool residual_added_first = false;
  bool branch_norms = false;         // norms on the branch outputs (Gemma2 sandwich, OLMo2)
  bool post_norm = false;            // OPT do_layer_norm_before=false: norm after each residual add
  bool final_norm = true;            // a norm before the LM head (absent in post-norm OPT)
  double residual_multiplier = 1.0;  // Granite: x + m·branch(x)
  // BLOOM apply_residual_connection_post_layernorm: the residual adds start from the normed input.
  bool residual_from_norm = false;

  // FalconLinear: the layers' products `x @ w.T` and their biases added after, so in
  // float16/bfloat16 the product is rounded before the bias is added (nn.Linear adds it inside).
  bool bias_after_product = false;

  // ----- MLP -----
  Activation activation = Activation::kSilu;
  bool gated_mlp = true;  // down(act(gate(x))·up(x)) vs fc2(act(fc1(x)))
  MoeConfig moe;
  std::vector<uint8_t> layer_moe;  // per layer: 1 = the MoE block (empty = every layer when moe)

  // ----- embeddings and head -----
  int64_t embed_proj_dim = 0;  // OPT word_embed_proj_dim != hidden_size: projected in and out
  bool embed_scale = false;    // Gemma: embeddings·√hidden (rounded to the model dtype)
  double embedding_multiplier = 1.0;  // Granite: embeddings·m
  double logits_divisor = 1.0;        // Granite logits_scaling: logits / d
  double logit_scale = 1.0;           // Cohere: logits · s
  int64_t learned_positions = 0;      // rows of a learned position table (GPT-2, OPT), 0 = none
  int64_t position_offset = 0;        // OPT's offset of 2
  bool embed_norm = false;            // BLOOM word_embeddings_layernorm: a norm on the embeddings

  // ----- attention -----
  QkNorm qk_norm = QkNorm::kNone;
  double clip_qkv = 0.0;    // OLMoE: q, k and v clamped to [-c, c] after the q/k norms (0 = off)
  double attn_scale = 0.0;  // multiplies q·k
  // The attention transformers runs for this family by default (HFLM passes no
  // attn_implementation); in float16/bfloat16 on the CPU their roundings differ.
  AttnImpl attention_impl = AttnImpl::kSdpa;
  double attn_softcap = 0.0, final_softcap = 0.0;  // 0 = off
  std::vector<int64_t> layer_sliding_window;       // per layer, 0 = full attention
  // Per layer (empty = none): a query sees only keys of its own chunk of this many positions
  // (Llama 4's chunked_attention), 0 = full attention.
  std::vector<int64_t> layer_attention_chunk;
  // Llama 4's attn_temperature_tuning on NoPE layers: queries times
  // log1p(floor((position + 1) / attn_floor_scale)) * attn_temperature_scale + 1 (0 = off).
  double attn_floor_scale = 0.0, attn_temperature_scale = 0.0;
  std::vector<uint8_t> layer_rope;  // per layer: 0 = no rotary (NoPE); empty = all
  MlaConfig mla;                    // multi-head latent attention (mla.cpp)
  Alibi alibi = Alibi::kNone;
  std::vector<float> alibi_slopes;  // per head (alibi.hpp)
  // GPT-OSS: a learned logit per head joins each softmax's denominator (and is dropped after).
  bool attn_sinks = false;

  // ----- rotary embedding (rope.hpp) -----
  RopeType rope = RopeType::kNone;
  double rope_theta = 10000.0;
  int64_t rotary_dim = 0;
  bool rope_interleaved = false;  // pairs (2i, 2i+1) rotate (GPT-J, Cohere), not (i, i + d/2)
  // The rotation runs in float32 with float32 cos/sin, rounded once to the dtype (the family's
  // rotary embedding returns float32 tables, or rotates complex float32 pairs): OLMo 2/3,
  // ERNIE 4.5, DeepSeek-V2, Llama 4. Otherwise cos/sin are rounded to the dtype and each
  // product and sum of the rotation rounds to it.
  bool rope_in_float32 = false;
  // The rotary tables come from torch.polar (DeepSeek-V2's and Llama 4's freqs_cis), whose CPU
  // kernel takes glibc's cosf/sinf per element: torch.cos/torch.sin's vectorised ones differ now
  // and then by an ulp.
  bool rope_polar = false;
  // With rope_in_float32: the cos/sin tables rounded to the model dtype before the float32
  // rotation (CohereRotaryEmbedding returns them in x.dtype, apply_rotary_pos_emb upcasts q, k).
  bool rope_tables_rounded = false;
  double rope_factor = 1.0, rope_low_freq_factor = 1.0, rope_high_freq_factor = 4.0;
  int64_t rope_original_max_positions = 8192;
  double rope_attention_factor = 1.0;                  // YaRN/LongRoPE scale of cos and sin
  double rope_beta_fast = 32.0, rope_beta_slow = 1.0;  // YaRN ramp
  bool rope_truncate = true;                           // YaRN: whole dimensions at the ramp's ends
  std::vector<double> rope_short_factor, rope_long_factor;  // LongRoPE, rotary_dim / 2 each
  // > 0: sliding-window layers rotate with the default frequencies of this base instead
  // (rope_parameters per layer type: Gemma3, OLMo3).
  double rope_local_theta = 0.0;

  bool tie_word_embeddings = false;
  std::string torch_dtype;  // config's torch_dtype / dtype ("" when absent)
  std::optional<int64_t> bos_token_id, eos_token_id, pad_token_id;

  bool uses_local_rope(size_t layer) const {
    return rope_local_theta > 0.0 && layer_sliding_window[layer] > 0;
  }
  bool uses_rope(size_t layer) const {
    return rope != RopeType::kNone && (layer_rope.empty() || layer_rope[layer] != 0);
  }
  // Widths of a head's cached keys and values (MLA: qk_head_dim and v_head_dim).
  int64_t key_head_dim() const { return mla.enabled() ? mla.qk_head_dim() : head_dim; }
  int64_t value_head_dim() const { return mla.enabled() ? mla.v_head_dim : head_dim; }
  int64_t attention_chunk(size_t layer) const {
    return layer_attention_chunk.empty() ? 0 : layer_attention_chunk[layer];
  }
  bool uses_moe(size_t layer) const {
    return moe.num_experts > 0 && (layer_moe.empty() || layer_moe[layer] != 0);
  }
};

// The architectures() values this backend runs (the registry of arch/registry.cpp).
const std::vector<std::string>& supported_architectures();

// Parses config.json (path for messages). Throws UserError for unsupported architectures or
// missing/invalid fields.
ArchConfig parse_arch_config(const Json& config, const std::string& path);
ArchConfig load_arch_config(const std::filesystem::path& model_dir);

}  // namespace lmeval::hf

// Taking a checkpoint's tensors into the model (Transformer::Impl) for an architecture file:
// names tried with and without the base model's prefix, shapes checked against config.json, and
// the Hugging Face naming most decoder families share (DecoderNames), so a family names only
// what differs. Internal to src/models/hf.
#pragma once

#include <string>
#include <vector>

#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

// Where a decoder keeps its weights, relative to the base model's prefix and to
// `layers` + index + "." for a layer's own. An empty name: the model has no such tensor.
struct DecoderNames {
  std::string prefix = "model.";
  std::string embed = "embed_tokens";
  std::string layers = "layers.";
  std::string ln1 = "input_layernorm", ln2 = "post_attention_layernorm";
  std::string post_attn, post_mlp;  // norms on the branch outputs (ArchConfig::branch_norms)
  std::string q = "self_attn.q_proj", k = "self_attn.k_proj", v = "self_attn.v_proj";
  std::string qkv;  // one fused projection, rows [q; k; v] (Phi3)
  std::string o = "self_attn.o_proj";
  std::string q_norm = "self_attn.q_norm", k_norm = "self_attn.k_norm";
  std::string gate = "mlp.gate_proj", up = "mlp.up_proj", down = "mlp.down_proj";
  std::string gate_up;                           // one fused projection, rows [gate; up] (Phi3)
  std::string fc1 = "mlp.fc1", fc2 = "mlp.fc2";  // the MLP when it is not gated
  // MoE layers: transformers 5's fused experts.gate_up_proj / experts.down_proj, else one module
  // per expert (`experts` + index + expert_gate / expert_up / expert_down), under `experts` or
  // `legacy_experts` (Mixtral's block_sparse_moe), and the router likewise.
  std::string experts = "mlp.experts.", router = "mlp.gate";
  std::string legacy_experts, legacy_router;
  std::string expert_gate = "gate_proj", expert_up = "up_proj", expert_down = "down_proj";
  // Fused experts stored as bmm operands, gate_up_proj [E, hidden, 2I] and down_proj
  // [E, I, hidden] (Llama 4), rather than nn.Linear's [E, 2I, hidden] and [E, hidden, I].
  bool experts_hidden_first = false;
  // GPT-OSS: gate_up_proj stored [E, hidden, 2I] with gate and up columns interleaved,
  // down_proj [E, I, hidden], each with a `_bias` [E, 2I] / [E, hidden].
  bool experts_in_out_interleaved = false;
  std::string shared_expert = "mlp.shared_expert.", shared_gate = "mlp.shared_expert_gate";
  std::string final_norm = "norm";
  std::string head = "lm_head";  // outside the prefix
  bool head_bias = false;        // an optional bias of the LM head (Phi)
};

// transformers' convert_moe_packed_tensors: MXFP4 blocks [E, R, G, 16] (two 4-bit values a byte,
// the low nibble first) and scales [E, R, G] (a power of two, biased by 127, per 32 values) as
// float32 [E, G * 32, R]. Every value is exact (a 4-bit float times a power of two).
Tensor dequantize_mxfp4(const Tensor& blocks, const Tensor& scales);

class WeightLoader {
 public:
  WeightLoader(Transformer::Impl& model, const WeightArchive& weights)
      : m(model), cfg(model.cfg), w_(weights) {}

  Transformer::Impl& m;
  const ArchConfig& cfg;

  // The tensor `prefix + name`, else `name` (checkpoints of bare base models), of that shape.
  Tensor get(const std::string& prefix, const std::string& name, const std::vector<int64_t>& shape,
             bool required = true);
  // The tensor of exactly that name.
  Tensor get_exact(const std::string& name, const std::vector<int64_t>& shape,
                   bool required = true);
  // A uint8 tensor of exactly that shape, as stored, on the CPU (MXFP4 blocks and scales).
  Tensor get_bytes(const std::string& prefix, const std::string& name,
                   const std::vector<int64_t>& shape);
  // A GPT-2 Conv1D weight, stored [in, out], as nn.Linear's [out, in].
  Tensor conv1d(const std::string& prefix, const std::string& name, int64_t in, int64_t out);
  // Rows of several projections stacked ([q; k; v], [gate; up]); all or none of the parts must
  // be defined (biases), undefined when none is.
  static Tensor cat0(const std::vector<Tensor>& parts);
  // A fused query_key_value weight [3 * heads * head_dim, in] or bias stored per head, rows
  // [head][q|k|v][head_dim] (BLOOM, GPT-NeoX, multi-head GPTBigCode), regrouped to
  // [q|k|v][head][head_dim]; undefined stays undefined.
  static Tensor per_head_qkv(const Tensor& t, int64_t heads, int64_t head_dim);

  // The ungated MLP under Megatron's names, `prefix + layer` mlp.dense_h_to_4h and
  // mlp.dense_4h_to_h (BLOOM, GPT-NeoX, Falcon), with their biases (`biases_required`, else
  // when present).
  void load_h_to_4h_mlp(const std::string& prefix, const std::string& layer, Layer& L,
                        bool biases_required);
  // Everything of a decoder named as `n` says: embeddings, each layer's norms, attention (with
  // optional biases and q/k norms), MLP or mixture of experts, the final norm and the LM head.
  void load_decoder(const DecoderNames& n);

 private:
  void load_moe(const DecoderNames& n, const std::string& p, const std::string& l, Layer& L);
  void load_mla(const std::string& p, const std::string& l, Layer& L);
  const WeightArchive& w_;
};

}  // namespace lmeval::hf

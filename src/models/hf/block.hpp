// The transformer block: the one description of how a layer wires its norms, attention, MLP and
// residual adds (pre-norm, post-norm OPT, parallel residual GPT-J/NeoX/Phi/Falcon, norms on the
// branch outputs with (Gemma2) or without (OLMo2) the pre-norms, Granite's residual multiplier).
// Both forward passes run it: Transformer::Impl::forward (ATen, any device) and forward_invariant
// (prefix_forward.cpp, fixed-order float32 kernels); each supplies the operations on four row
// buffers. Internal to src/models/hf.
#pragma once

#include <cstddef>

#include "models/hf/transformer.hpp"

namespace lmeval::hf {

// The rows a block works on: the residual stream, the attention and MLP inputs, the branch
// outputs.
enum class BlockBuf { kHidden, kInput, kAttnOut, kMlpOut };

// Ops provides, on BlockBuf buffers of one batch (dst may equal src):
//   norm(dst, src, weight, bias)   dst = the config's norm of src (bias may be undefined)
//   copy(dst, src)
//   attention(dst, src, layer)     dst = output projection of the layer's attention over src
//   mlp(dst, src, layer)           dst = the layer's MLP of src
//   add(dst, a, b)                 dst = a + b
//   add3(dst, a, b, c)             dst = (a + b) + c
//   scale(dst, f)                  dst = dst * f
// keys_only: the layer's keys and values are all the caller needs (a prompt's last layer before
// its generation: its output feeds nothing); the block stops after its attention, which stored
// them.
template <class Ops, class Layer>
void run_block(const ArchConfig& cfg, const Layer& L, size_t layer, Ops& ops,
               bool keys_only = false) {
  using B = BlockBuf;
  const bool pre_norm = cfg.pre_norm && !cfg.post_norm;
  if (pre_norm)
    ops.norm(B::kInput, B::kHidden, L.ln1_w, L.ln1_b);
  else
    ops.copy(B::kInput, B::kHidden);
  ops.attention(B::kAttnOut, B::kInput, layer);
  if (keys_only) return;
  if (cfg.branch_norms) ops.norm(B::kAttnOut, B::kAttnOut, L.post_attn_w, {});
  if (cfg.residual_multiplier != 1.0) ops.scale(B::kAttnOut, cfg.residual_multiplier);
  if (cfg.post_norm) {  // OPT do_layer_norm_before=false: norms after each residual add
    ops.add(B::kInput, B::kHidden, B::kAttnOut);
    ops.norm(B::kHidden, B::kInput, L.ln1_w, L.ln1_b);
    ops.mlp(B::kMlpOut, B::kHidden, layer);
    ops.add(B::kInput, B::kHidden, B::kMlpOut);
    ops.norm(B::kHidden, B::kInput, L.ln2_w, L.ln2_b);
  } else if (cfg.parallel_residual) {
    // The MLP reads the residual stream too, through the attention's norm (GPT-J, Phi, Falcon's
    // shared layer norm) or its own (NeoX).
    if (!cfg.shared_layer_norm) ops.norm(B::kInput, B::kHidden, L.ln2_w, L.ln2_b);
    ops.mlp(B::kMlpOut, B::kInput, layer);
    ops.add3(B::kHidden, B::kHidden, B::kAttnOut, B::kMlpOut);
  } else {
    // BLOOM's apply_residual_connection_post_layernorm: each residual add starts from the
    // branch's normed input instead of the residual stream.
    const B residual = cfg.residual_from_norm && pre_norm ? B::kInput : B::kHidden;
    ops.add(B::kHidden, residual, B::kAttnOut);
    if (pre_norm) {
      ops.norm(B::kInput, B::kHidden, L.ln2_w, L.ln2_b);
      ops.mlp(B::kMlpOut, B::kInput, layer);
    } else {
      ops.mlp(B::kMlpOut, B::kHidden, layer);
    }
    if (cfg.branch_norms) ops.norm(B::kMlpOut, B::kMlpOut, L.post_mlp_w, {});
    if (cfg.residual_multiplier != 1.0) ops.scale(B::kMlpOut, cfg.residual_multiplier);
    ops.add(B::kHidden, residual, B::kMlpOut);
  }
}

}  // namespace lmeval::hf

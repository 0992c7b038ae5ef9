// A debugging dump of the ATen forward's intermediate tensors, to find the first operation whose
// float16/bfloat16 rounding differs from transformers' (scripts/dump_half_hidden_states.py
// compares it with transformers' own intermediates). Off unless LMEVAL_HF_DUMP names a folder:
// then each forward call writes FOLDER/forward_NNNN.safetensors holding the input ids and every
// recorded tensor, as float32 (exact for float16/bfloat16 values). The names are canonical, not
// any checkpoint's: embed, L{i}.norm{k}_in, L{i}.norm{k}, L{i}.qkv, L{i}.q_rope, L{i}.k_rope,
// L{i}.attn, L{i}.attn_out, L{i}.gate_up, L{i}.mlp_act, L{i}.mlp_out, L{i}.out, final_norm,
// logits, log_softmax. Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace lmeval::hf::debug {

// Whether a dump folder is set (LMEVAL_HF_DUMP, read once, or dump_to): every other call is a
// no-op when none is.
bool dump_enabled();
// Dumps to `dir` from the next forward call on (empty: no more dumps); the records pending go
// to the folder set before. For tests.
void dump_to(const std::string& dir);
// A forward call over `ids` begins: the previous call's records go to their file.
void dump_begin(const at::Tensor& ids);
// The layer the next records belong to (-1: outside the layers); resets its norm counter.
void dump_layer(int layer);
// Records t under `name` (prefixed L{layer}. inside a layer). A name recorded twice in one
// forward keeps its first value.
void dump(const std::string& name, const at::Tensor& t);
// Records the next norm of the layer, its input and output (L{i}.norm{k}_in, L{i}.norm{k}).
void dump_norm(const at::Tensor& in, const at::Tensor& out);

}  // namespace lmeval::hf::debug

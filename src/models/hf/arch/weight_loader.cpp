// The shared weight naming of decoder families (weight_loader.hpp).
#include "models/hf/arch/weight_loader.hpp"

#include <cmath>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

Tensor WeightLoader::get(const std::string& prefix, const std::string& name,
                         const std::vector<int64_t>& shape, bool required) {
  return m.take(w_, {prefix + name, name}, shape, required);
}

Tensor WeightLoader::get_exact(const std::string& name, const std::vector<int64_t>& shape,
                               bool required) {
  return m.take(w_, {name}, shape, required);
}

Tensor WeightLoader::get_bytes(const std::string& prefix, const std::string& name,
                               const std::vector<int64_t>& shape) {
  const TensorView* view = w_.find(prefix + name);
  if (!view) view = w_.find(name);
  if (!view)
    throw UserError("weights lack tensor '" + prefix + name + "'", {"", 0, 0, prefix + name},
                    "an MXFP4 checkpoint of " + cfg.architecture + " matching config.json");
  if (view->dtype != "U8" || view->shape != shape) {
    std::string want;
    for (int64_t d : shape) want += (want.empty() ? "" : ", ") + std::to_string(d);
    throw UserError("tensor '" + view->name + "' is not a U8 tensor of shape [" + want + "]",
                    {view->file, 0, 0, view->name},
                    "MXFP4 blocks and scales consistent with config.json");
  }
  m.used_tensors.insert(view->name);
  Tensor out = at::from_blob(const_cast<std::byte*>(view->data), shape, at::kByte).clone();
  w_.release(*view);
  return out;
}

Tensor dequantize_mxfp4(const Tensor& blocks, const Tensor& scales) {
  static const float kFp4[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                 -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  std::vector<float> pow2(256);  // 2^(scale - 127), exact (2^-127 is a float32 subnormal)
  for (int s = 0; s < 256; ++s) pow2[static_cast<size_t>(s)] = std::ldexp(1.0f, s - 127);
  Tensor lut = at::tensor(at::ArrayRef<float>(kFp4, 16), at::kFloat);
  Tensor exp2 = at::tensor(at::ArrayRef<float>(pow2), at::kFloat);
  const int64_t E = blocks.size(0), R = blocks.size(1), G = blocks.size(2);
  Tensor b = blocks.to(at::kLong);
  Tensor lo = lut.index_select(0, at::bitwise_and(b, 0x0F).flatten());
  Tensor hi = lut.index_select(0, at::bitwise_right_shift(b, 4).flatten());
  Tensor vals = at::stack({lo, hi}, -1).view({E, R, G, 32});
  Tensor scale = exp2.index_select(0, scales.to(at::kLong).flatten()).view({E, R, G, 1});
  return (vals * scale).view({E, R, G * 32}).transpose(1, 2).contiguous();
}

Tensor WeightLoader::conv1d(const std::string& prefix, const std::string& name, int64_t in,
                            int64_t out) {
  return get(prefix, name, {in, out}).t().contiguous();
}

void WeightLoader::load_h_to_4h_mlp(const std::string& p, const std::string& l, Layer& L,
                                    bool biases_required) {
  const int64_t Hd = cfg.hidden_size, I = cfg.intermediate_size;
  L.up_w = get(p, l + "mlp.dense_h_to_4h.weight", {I, Hd});
  L.up_b = get(p, l + "mlp.dense_h_to_4h.bias", {I}, biases_required);
  L.down_w = get(p, l + "mlp.dense_4h_to_h.weight", {Hd, I});
  L.down_b = get(p, l + "mlp.dense_4h_to_h.bias", {Hd}, biases_required);
}

Tensor WeightLoader::cat0(const std::vector<Tensor>& parts) {
  std::vector<Tensor> defined;
  for (const auto& p : parts)
    if (p.defined()) defined.push_back(p);
  if (defined.empty()) return Tensor();
  if (defined.size() != parts.size())
    throw UserError("some q/k/v (or gate/up) tensors have biases and others not", {},
                    "consistent biases");
  return at::cat(defined, 0);
}

Tensor WeightLoader::per_head_qkv(const Tensor& t, int64_t heads, int64_t head_dim) {
  if (!t.defined()) return t;
  const int64_t rows = 3 * heads * head_dim;
  if (t.dim() == 1)
    return t.reshape({heads, 3, head_dim}).transpose(0, 1).reshape({rows}).contiguous();
  const int64_t cols = t.size(1);
  return t.reshape({heads, 3, head_dim, cols}).transpose(0, 1).reshape({rows, cols}).contiguous();
}

void WeightLoader::load_decoder(const DecoderNames& n) {
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads, KV = cfg.num_kv_heads, hd = cfg.head_dim;
  const int64_t I = cfg.intermediate_size, V = cfg.vocab_size;
  const int64_t qdim = H * hd, kvdim = KV * hd;
  const std::string& p = n.prefix;
  const bool ln_bias = cfg.norm == NormKind::kLayerNorm && cfg.norm_bias;
  auto norm = [&](const std::string& l, const std::string& name, int64_t width, Tensor& wt,
                  Tensor* bias) {
    wt = get(p, l + name + ".weight", {width});
    if (bias && ln_bias) *bias = get(p, l + name + ".bias", {width});
  };
  auto linear = [&](const std::string& l, const std::string& name, int64_t out, int64_t in,
                    Tensor& wt, Tensor& b) {
    wt = get(p, l + name + ".weight", {out, in});
    b = get(p, l + name + ".bias", {out}, false);
  };
  m.embed = get(p, n.embed + ".weight", {V, Hd});
  m.layers.resize(cfg.num_layers);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    Layer& L = m.layers[i];
    const std::string l = n.layers + std::to_string(i) + ".";
    if (!n.ln1.empty()) norm(l, n.ln1, Hd, L.ln1_w, &L.ln1_b);
    if (!n.ln2.empty()) norm(l, n.ln2, Hd, L.ln2_w, &L.ln2_b);
    if (!n.post_attn.empty()) norm(l, n.post_attn, Hd, L.post_attn_w, nullptr);
    if (!n.post_mlp.empty()) norm(l, n.post_mlp, Hd, L.post_mlp_w, nullptr);
    if (cfg.mla.enabled()) {
      load_mla(p, l, L);
    } else if (!n.qkv.empty()) {
      linear(l, n.qkv, qdim + 2 * kvdim, Hd, L.qkv_w, L.qkv_b);
    } else {
      Tensor qw, qb, kw, kb, vw, vb;
      linear(l, n.q, qdim, Hd, qw, qb);
      linear(l, n.k, kvdim, Hd, kw, kb);
      linear(l, n.v, kvdim, Hd, vw, vb);
      L.qkv_w = cat0({qw, kw, vw});
      L.qkv_b = cat0({qb, kb, vb});
    }
    linear(l, n.o, Hd, cfg.mla.enabled() ? H * cfg.mla.v_head_dim : qdim, L.o_w, L.o_b);
    if (cfg.qk_norm == QkNorm::kPerHead) {
      norm(l, n.q_norm, hd, L.q_norm_w, &L.q_norm_b);
      norm(l, n.k_norm, hd, L.k_norm_w, &L.k_norm_b);
    } else if (cfg.qk_norm == QkNorm::kPerHeadWeights) {
      // One [heads, hd] weight (Cohere), or one LayerNorm module per head (StableLM's
      // q_layernorm.norms.N).
      auto per_head = [&](const std::string& name, int64_t heads, Tensor& wt, Tensor& bias) {
        wt = get(p, l + name + ".weight", {heads, hd}, false);
        if (wt.defined()) {
          bias = get(p, l + name + ".bias", {heads, hd}, false);
          return;
        }
        std::vector<Tensor> ws, bs;
        for (int64_t h = 0; h < heads; ++h) {
          const std::string x = l + name + ".norms." + std::to_string(h) + ".";
          ws.push_back(get(p, x + "weight", {hd}));
          Tensor b = get(p, x + "bias", {hd}, false);
          if (b.defined()) bs.push_back(b);
        }
        wt = at::stack(ws);
        if (!bs.empty()) bias = at::stack(bs);
      };
      per_head(n.q_norm, H, L.q_norm_w, L.q_norm_b);
      per_head(n.k_norm, KV, L.k_norm_w, L.k_norm_b);
    } else if (cfg.qk_norm == QkNorm::kWhole) {
      norm(l, n.q_norm, qdim, L.q_norm_w, &L.q_norm_b);
      norm(l, n.k_norm, kvdim, L.k_norm_w, &L.k_norm_b);
    }
    if (cfg.uses_moe(i)) {
      load_moe(n, p, l, L);
    } else if (!cfg.gated_mlp) {
      linear(l, n.fc1, I, Hd, L.up_w, L.up_b);
      linear(l, n.fc2, Hd, I, L.down_w, L.down_b);
    } else {
      if (!n.gate_up.empty()) {
        linear(l, n.gate_up, 2 * I, Hd, L.up_w, L.up_b);
      } else {
        Tensor gw, gb, uw, ub;
        linear(l, n.gate, I, Hd, gw, gb);
        linear(l, n.up, I, Hd, uw, ub);
        L.up_w = cat0({gw, uw});
        L.up_b = cat0({gb, ub});
      }
      linear(l, n.down, Hd, I, L.down_w, L.down_b);
    }
  }
  if (cfg.final_norm) norm("", n.final_norm, Hd, m.final_w, &m.final_b);
  if (!cfg.tie_word_embeddings) {
    m.head_w = get_exact(n.head + ".weight", {V, Hd});
    if (n.head_bias) m.head_b = get_exact(n.head + ".bias", {V}, false);
  }
}

void WeightLoader::load_moe(const DecoderNames& n, const std::string& p, const std::string& l,
                            Layer& L) {
  const MoeConfig& moe = cfg.moe;
  const int64_t Hd = cfg.hidden_size, E = moe.num_experts, I = moe.expert_intermediate;
  auto names = [&](const std::string& a, const std::string& b) {
    std::vector<std::string> out = {p + l + a, l + a};
    if (!b.empty()) out.insert(out.end(), {p + l + b, l + b});
    return out;
  };
  L.router_w = m.take(
      w_, names(n.router + ".weight", n.legacy_router.empty() ? "" : n.legacy_router + ".weight"),
      {E, Hd}, true);
  L.router_b = m.take(w_, names(n.router + ".bias", ""), {E}, false);
  if (n.experts_in_out_interleaved) {
    // Columns (gate 0, up 0, gate 1, up 1, ...) become rows [gate; up] of [E, 2I, hidden].
    auto deinterleave = [&](const Tensor& t, int64_t dim) {
      return at::cat({t.slice(dim, 0, 2 * I, 2), t.slice(dim, 1, 2 * I, 2)}, dim).contiguous();
    };
    Tensor gate_up, down;
    if (moe.mxfp4) {
      // Each tensor in turn, so that a missing one is named in the checkpoint's order.
      const std::string x = l + n.experts;
      const Tensor gu_blocks = get_bytes(p, x + "gate_up_proj_blocks", {E, 2 * I, Hd / 32, 16});
      const Tensor gu_scales = get_bytes(p, x + "gate_up_proj_scales", {E, 2 * I, Hd / 32});
      const Tensor down_blocks = get_bytes(p, x + "down_proj_blocks", {E, Hd, I / 32, 16});
      const Tensor down_scales = get_bytes(p, x + "down_proj_scales", {E, Hd, I / 32});
      gate_up = dequantize_mxfp4(gu_blocks, gu_scales).to(m.fopt());
      down = dequantize_mxfp4(down_blocks, down_scales).to(m.fopt());
      m.n_params += gate_up.numel() + down.numel();
    } else {
      gate_up = m.take(w_, names(n.experts + "gate_up_proj", ""), {E, Hd, 2 * I}, true);
      down = m.take(w_, names(n.experts + "down_proj", ""), {E, I, Hd}, true);
    }
    L.experts_up = deinterleave(gate_up.transpose(1, 2), 1);
    L.experts_up_b =
        deinterleave(m.take(w_, names(n.experts + "gate_up_proj_bias", ""), {E, 2 * I}, true), 1);
    L.experts_down = down.transpose(1, 2).contiguous();
    L.experts_down_b = m.take(w_, names(n.experts + "down_proj_bias", ""), {E, Hd}, true);
    return;
  }
  using Shape = std::vector<int64_t>;
  const bool bmm = n.experts_hidden_first;  // as bmm operands: transposed to nn.Linear's layout
  Tensor gate_up = m.take(w_, names(n.experts + "gate_up_proj", ""),
                          bmm ? Shape{E, Hd, 2 * I} : Shape{E, 2 * I, Hd}, false);
  if (gate_up.defined()) {
    Tensor down = m.take(w_, names(n.experts + "down_proj", ""),
                         bmm ? Shape{E, I, Hd} : Shape{E, Hd, I}, true);
    L.experts_up = bmm ? gate_up.transpose(1, 2).contiguous() : gate_up;
    L.experts_down = bmm ? down.transpose(1, 2).contiguous() : down;
  } else {
    std::vector<Tensor> ups, downs;
    for (int64_t e = 0; e < E; ++e) {
      auto expert = [&](const std::string& part, const std::vector<int64_t>& shape) {
        const std::string x = std::to_string(e) + "." + part + ".weight";
        return m.take(w_,
                      names(n.experts + x, n.legacy_experts.empty() ? "" : n.legacy_experts + x),
                      shape, true);
      };
      ups.push_back(at::cat({expert(n.expert_gate, {I, Hd}), expert(n.expert_up, {I, Hd})}, 0));
      downs.push_back(expert(n.expert_down, {Hd, I}));
    }
    L.experts_up = at::stack(ups);
    L.experts_down = at::stack(downs);
  }
  if (moe.router == MoeRouter::kDeepseekV3)  // a buffer transformers saves with the router
    L.router_bias = m.take(w_, names(n.router + ".e_score_correction_bias", ""), {E}, true);
  if (moe.shared_intermediate > 0) {
    const int64_t S = moe.shared_intermediate;
    const std::string x = l + n.shared_expert;
    L.up_w = at::cat(
        {get(p, x + "gate_proj.weight", {S, Hd}), get(p, x + "up_proj.weight", {S, Hd})}, 0);
    L.down_w = get(p, x + "down_proj.weight", {Hd, S});
    if (moe.shared_gate) L.shared_gate_w = get(p, l + n.shared_gate + ".weight", {1, Hd});
  }
}

// DeepseekV2Attention's projections (names as transformers and the DeepSeek checkpoints keep them).
void WeightLoader::load_mla(const std::string& p, const std::string& l, Layer& L) {
  const MlaConfig& a = cfg.mla;
  const int64_t Hd = cfg.hidden_size, H = cfg.num_heads;
  const int64_t qk = a.qk_head_dim(), r = a.kv_lora_rank, qr = a.q_lora_rank;
  const std::string x = l + "self_attn.";
  if (qr > 0) {
    L.q_a_w = get(p, x + "q_a_proj.weight", {qr, Hd});
    L.q_a_b = get(p, x + "q_a_proj.bias", {qr}, false);
    L.q_a_norm_w = get(p, x + "q_a_layernorm.weight", {qr});
    L.q_b_w = get(p, x + "q_b_proj.weight", {H * qk, qr});
  } else {
    L.qkv_w = get(p, x + "q_proj.weight", {H * qk, Hd});
  }
  L.kv_a_w = get(p, x + "kv_a_proj_with_mqa.weight", {r + a.qk_rope_head_dim, Hd});
  L.kv_a_b = get(p, x + "kv_a_proj_with_mqa.bias", {r + a.qk_rope_head_dim}, false);
  L.kv_a_norm_w = get(p, x + "kv_a_layernorm.weight", {r});
  L.kv_b_w = get(p, x + "kv_b_proj.weight", {H * (a.qk_nope_head_dim + a.v_head_dim), r});
}

}  // namespace lmeval::hf

// Llama 4 text (Llama4ForCausalLM): Llama's block with rotary pairs (2i, 2i+1) on the layers of
// no_rope_layers (1 = rotary) and, on those, an L2 norm of each head's q and k after the
// rotation (use_qk_norm) and attention within chunks of attention_chunk_size positions
// (layer_types' chunked_attention); the NoPE layers attend globally with their queries scaled
// by attn_temperature_tuning. Every interleave_moe_layer_step-th layer (moe_layers) is a mixture
// of experts whose sigmoid top-k router scores multiply each expert's input, plus a shared
// expert; the dense layers' MLPs are intermediate_size_mlp wide.
#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_llama4 {

// A per-layer list of config.json, `num_layers` long.
std::vector<int64_t> layer_ints(const ConfigReader& c, const std::string& key, int64_t layers) {
  const Json& v = c.json()[key];
  if (!v.is_array() || static_cast<int64_t>(v.size()) != layers)
    throw UserError(key + " is not a list of " + std::to_string(layers) + " entries",
                    {c.path(), 0, 0, "$." + key}, "one integer per layer");
  std::vector<int64_t> out;
  for (const auto& x : v) out.push_back(c.as_int(x, key));
  return out;
}

void parse(const ConfigReader& c, ArchConfig& a) {
  parse_llama_shape(c, a, {.rms_norm_eps = 1e-5, .rope_theta = 500000.0});
  const std::string& path = c.path();
  const int64_t L = a.num_layers;
  a.rope_interleaved = true;  // apply_rotary_emb: complex products of pairs (2i, 2i+1)
  a.rope_in_float32 = true;   // ... of xq.float() with float32 freqs_cis
  a.rope_polar = true;        // freqs_cis = torch.polar(ones, freqs)
  // Llama4TextConfig.__post_init__: no_rope_layers (1 = rotary) default to NoPE every
  // no_rope_layer_interval-th layer; layer_types to chunked attention on the rotary layers.
  std::vector<int64_t> rope;
  if (c.has("no_rope_layers") && !c.json()["no_rope_layers"].empty()) {
    rope = layer_ints(c, "no_rope_layers", L);
  } else {
    const int64_t every = c.size_or("no_rope_layer_interval", 4);
    for (int64_t i = 0; i < L; ++i) rope.push_back((i + 1) % every != 0);
  }
  a.layer_rope.assign(rope.begin(), rope.end());
  std::vector<bool> chunked(static_cast<size_t>(L));
  if (c.has("layer_types")) {
    const Json& t = c.json()["layer_types"];
    if (!t.is_array() || static_cast<int64_t>(t.size()) != L)
      throw UserError("layer_types is not a list of " + std::to_string(L) + " entries",
                      {path, 0, 0, "$.layer_types"}, "one layer type per layer");
    for (int64_t i = 0; i < L; ++i) {
      if (t[i] != "chunked_attention" && t[i] != "full_attention")
        throw UserError("layer_types holds " + t[i].dump(), {path, 0, 0, "$.layer_types"},
                        "chunked_attention or full_attention");
      chunked[i] = t[i] == "chunked_attention";
    }
  } else {
    for (int64_t i = 0; i < L; ++i) chunked[i] = rope[i] != 0;
  }
  // create_chunked_causal_mask raises without a chunk size, whatever the layer types.
  if (!c.has("attention_chunk_size") && c.json().contains("attention_chunk_size"))
    throw UserError("attention_chunk_size is null", {path, 0, 0, "$.attention_chunk_size"},
                    "the chunk size of the chunked attention layers");
  const int64_t chunk = c.size_or("attention_chunk_size", 8192);
  a.layer_attention_chunk.assign(L, 0);
  for (int64_t i = 0; i < L; ++i)
    if (chunked[i]) a.layer_attention_chunk[i] = chunk;
  if (c.bool_or("use_qk_norm", true)) a.qk_norm = QkNorm::kL2AfterRope;
  if (c.bool_or("attn_temperature_tuning", true)) {
    a.attn_floor_scale = c.num_or("floor_scale", 8192);
    a.attn_temperature_scale = c.num_or("attn_scale", 0.1);
    if (a.attn_floor_scale == 0.0)
      throw UserError("floor_scale is 0", {path, 0, 0, "$.floor_scale"}, "a non-zero number");
  }
  // The MoE layers: moe_layers, else every interleave_moe_layer_step-th.
  MoeConfig& e = a.moe;
  e.num_experts = c.size_or("num_local_experts", 16);
  e.top_k = c.size_or("num_experts_per_tok", 1);
  if (e.top_k > e.num_experts)
    throw UserError("num_experts_per_tok " + std::to_string(e.top_k) + " exceeds the " +
                        std::to_string(e.num_experts) + " experts",
                    {path, 0, 0, "$.num_experts_per_tok"}, "at most num_local_experts");
  e.expert_intermediate = a.intermediate_size;
  e.shared_intermediate = a.intermediate_size;
  e.router = MoeRouter::kLlama4;
  e.transposed_experts = true;  // Llama4TextExperts: torch.bmm(x, gate_up_proj [E, in, out])
  a.intermediate_size = c.size_or("intermediate_size_mlp", 16384);
  a.layer_moe.assign(L, 0);
  if (c.has("moe_layers")) {
    const Json& m = c.json()["moe_layers"];
    if (!m.is_array())
      throw UserError("moe_layers is not a list", {path, 0, 0, "$.moe_layers"},
                      "a list of layer indices");
    for (const auto& x : m) {
      const int64_t i = c.as_int(x, "moe_layers");
      if (i >= 0 && i < L) a.layer_moe[i] = 1;
    }
  } else {
    const int64_t step = c.size_or("interleave_moe_layer_step", 1);
    for (int64_t i = step - 1; i < L; i += step) a.layer_moe[i] = 1;
  }
}

void load(WeightLoader& w) {
  DecoderNames n;  // Llama's names, except the MLP's:
  n.gate = "feed_forward.gate_proj";
  n.up = "feed_forward.up_proj";
  n.down = "feed_forward.down_proj";
  n.experts = "feed_forward.experts.";
  n.experts_hidden_first = true;  // gate_up_proj [E, hidden, 2I], down_proj [E, I, hidden]
  n.router = "feed_forward.router";
  n.shared_expert = "feed_forward.shared_expert.";
  w.load_decoder(n);
}

}  // namespace arch_llama4

extern const ArchSpec kLlama4{"Llama4ForCausalLM", "llama4_text", 131072, arch_llama4::parse,
                              arch_llama4::load};

}  // namespace lmeval::hf

// GPT-OSS (GptOssForCausalLM): Llama's pre-norm layout with attention biases, a learned sink
// logit per head in every softmax, sliding-window and full layers alternating, YaRN rotary, and
// a mixture of experts in every layer: a router with a bias whose top k logits are softmaxed,
// experts with biases and a clamped SwiGLU (swiglu_limit, swiglu_alpha), stored fused and
// transposed with gate and up interleaved (GptOssExperts).
#include "lmeval/core/error.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"

namespace lmeval::hf {
namespace arch_gpt_oss {

void parse(const ConfigReader& c, ArchConfig& a) {
  // openai/gpt-oss-* ship MXFP4 experts: dequantised at load, as transformers does on a CPU.
  if (c.has("quantization_config")) {
    const Json& q = c.json()["quantization_config"];
    const std::string method =
        q.is_object() && q.contains("quant_method") && q["quant_method"].is_string()
            ? q["quant_method"].get<std::string>()
            : q.dump();
    if (method != "mxfp4")
      throw UserError("GPT-OSS weights quantised with quant_method '" + method +
                          "' have no native implementation",
                      {c.path(), 0, 0, "$.quantization_config.quant_method"},
                      "\"mxfp4\" (dequantised at load) or no quantization_config");
    a.moe.mxfp4 = true;
  }
  // GptOssConfig.__post_init__: without rope_parameters, YaRN of factor 32 over 4096 positions.
  Json j = c.json();
  if (!c.has("rope_parameters") && !c.has("rope_scaling"))
    j["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 32.0},
                            {"beta_fast", 32.0},   {"beta_slow", 1.0},
                            {"truncate", false},   {"original_max_position_embeddings", 4096}};
  const ConfigReader r(j, c.path());
  parse_llama_shape(r, a, {.rms_norm_eps = 1e-5, .rope_theta = 150000.0});
  parse_window_pattern(r, a, r.size_or("sliding_window", 128), 2);
  a.attention_impl = AttnImpl::kEager;  // sinks: GptOssPreTrainedModel._supports_sdpa = False
  a.norm_weight_in_float32 = true;      // GptOssRMSNorm
  a.attn_sinks = true;
  // GptOssConfig's attribute_map: num_experts is another name of num_local_experts.
  a.moe.num_experts = r.size_or(r.has("num_experts") ? "num_experts" : "num_local_experts", 128);
  a.moe.top_k = r.size_or("num_experts_per_tok", 4);
  a.moe.expert_intermediate = a.intermediate_size;
  a.moe.router = MoeRouter::kTopkSoftmax;
  a.moe.transposed_experts = true;  // @use_experts_implementation(is_transposed=True)
  a.moe.swiglu_limit = r.num_or("swiglu_limit", 7.0);
  a.moe.swiglu_alpha = r.num_or("swiglu_alpha", 1.702);
  if (a.moe.mxfp4 && (a.hidden_size % 32 != 0 || a.intermediate_size % 32 != 0))
    throw UserError("MXFP4 experts need hidden_size and intermediate_size divisible by 32",
                    {c.path(), 0, 0, "$.intermediate_size"}, "multiples of 32 (blocks of 32)");
}

void load(WeightLoader& w) {
  DecoderNames n;
  n.router = "mlp.router";
  n.experts_in_out_interleaved = true;
  w.load_decoder(n);
  for (int64_t i = 0; i < w.cfg.num_layers; ++i)
    w.m.layers[i].sinks =
        w.get(n.prefix, n.layers + std::to_string(i) + ".self_attn.sinks", {w.cfg.num_heads});
}

}  // namespace arch_gpt_oss

extern const ArchSpec kGptOss{"GptOssForCausalLM", "gpt_oss", 131072, arch_gpt_oss::parse,
                              arch_gpt_oss::load};

}  // namespace lmeval::hf

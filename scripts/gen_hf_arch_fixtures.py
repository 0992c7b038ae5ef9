#!/usr/bin/env python3
"""Tiny random-weight models for the hf backend's less common architecture variants, with
transformers' own outputs as goldens (tests/fixtures/hf_arch/<name>/).

The fixtures of ../shared/fixtures cover the common architectures; these add what they do not:
rotary scaling by YaRN, dynamic NTK and LongRoPE, OPT with post-layer norms and projected
embeddings (opt-350m's layout), Phi with q/k layer norms, and one fixture per architecture that
../shared/fixtures lacks (Granite, SmolLM3, OLMo 2, StarCoder2, and the mixture-of-experts
families Mixtral, Qwen2-MoE, Qwen3-MoE and OLMoE). The golden format is the one of
../shared/fixtures/README.md (inputs of lengths 7, 20 and 60; a left-padded batch; two greedy
generations of 20 tokens), with a smaller vocabulary (128) and float16 weights to keep the files
small (the weights are rounded to float16 first, so the float32 model that makes the goldens and
the saved file hold the same numbers).

Length-dependent rotary types (dynamic, longrope) choose their frequencies from the longest
position of a forward pass and, for dynamic, from what earlier calls saw (transformers'
`dynamic_rope_update`). Every golden here is made with the rotary state of a freshly loaded model,
one sequence per call: what lm-eval reproduces (docs/fidelity.md). Their `batched` entry is null:
transformers' padded batch gives other numbers by design, and the test checks instead that
lm-eval's batch gives each row's own numbers.

Usage (torch 2.15.0 and transformers 5.23.0, CPU):
    python3 -m venv .venv-fixtures
    .venv-fixtures/bin/pip install torch==2.15.0 transformers==5.23.0 safetensors numpy
    .venv-fixtures/bin/python scripts/gen_hf_arch_fixtures.py tests/fixtures/hf_arch [name ...]
"""
import json
import math
import os
import shutil
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

VOCAB, HID, INTER, HEADS, KV, LAYERS = 128, 64, 64, 4, 2, 2
COMMON = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0)
LENGTHS = (7, 20, 60)


def fixture_specs():
    T = transformers
    llama = dict(hidden_size=HID, intermediate_size=INTER, num_hidden_layers=LAYERS,
                 num_attention_heads=HEADS, num_key_value_heads=KV, rms_norm_eps=1e-5,
                 tie_word_embeddings=False, **COMMON)
    g = torch.Generator().manual_seed(7)
    half = HID // HEADS // 2
    short = [round(1.0 + 0.5 * v, 4) for v in torch.rand(half, generator=g).tolist()]
    long = [round(1.0 + 6.0 * v, 4) for v in torch.rand(half, generator=g).tolist()]
    return {
        # Static YaRN (Qwen2.5/Qwen3 long-context configs): ramp between interpolated and
        # extrapolated frequencies, cos/sin scaled by 0.1 ln(factor) + 1.
        "llama_yarn": (T.LlamaConfig, T.LlamaForCausalLM, dict(llama, max_position_embeddings=64, rope_parameters={
            "rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
            "original_max_position_embeddings": 16})),
        # YaRN as Qwen2 writes it, with an explicit attention factor and no truncation.
        "qwen2_yarn": (T.Qwen2Config, T.Qwen2ForCausalLM, dict(
            llama, max_position_embeddings=64, use_sliding_window=False, rope_parameters={
                "rope_type": "yarn", "rope_theta": 1000000.0, "factor": 2.5, "beta_fast": 16.0,
                "beta_slow": 2.0, "attention_factor": 1.2, "truncate": False,
                "original_max_position_embeddings": 24})),
        # Dynamic NTK: beyond max_position_embeddings (16) the base grows with the length.
        "llama_dynamic": (T.LlamaConfig, T.LlamaForCausalLM, dict(llama, max_position_embeddings=16, rope_parameters={
            "rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0})),
        # LongRoPE (Phi-3 128k): short factors up to original_max_position_embeddings, long beyond.
        "phi3_longrope": (T.Phi3Config, T.Phi3ForCausalLM, dict(
            hidden_size=HID, intermediate_size=INTER, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV, max_position_embeddings=64, original_max_position_embeddings=16,
            rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": short,
                             "long_factor": long},
            tie_word_embeddings=False, **COMMON)),
        # opt-350m's layout: layer norms after each block, embeddings projected in and out.
        "opt_postnorm": (T.OPTConfig, T.OPTForCausalLM, dict(
            hidden_size=HID, ffn_dim=INTER, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            max_position_embeddings=64, word_embed_proj_dim=32, do_layer_norm_before=False,
            activation_function="relu", **dict(COMMON, bos_token_id=2, pad_token_id=1))),
        # Phi with LayerNorms over each head's queries and keys.
        "phi_qk_layernorm": (T.PhiConfig, T.PhiForCausalLM, dict(
            hidden_size=HID, intermediate_size=INTER, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=HEADS, max_position_embeddings=64, qk_layernorm=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
            **COMMON)),
        # Granite: Llama with embedding, attention, residual and logit multipliers.
        "granite": (T.GraniteConfig, T.GraniteForCausalLM, dict(
            llama, max_position_embeddings=64, embedding_multiplier=3.0, attention_multiplier=0.2,
            residual_multiplier=0.5, logits_scaling=2.0)),
        # SmolLM3: every second layer here without rotary embedding (NoPE).
        "smollm3": (T.SmolLM3Config, T.SmolLM3ForCausalLM, dict(
            llama, max_position_embeddings=64, no_rope_layer_interval=2, tie_word_embeddings=True)),
        # OLMo 2: branch-output norms only, q/k norms over all heads.
        "olmo2": (T.Olmo2Config, T.Olmo2ForCausalLM, dict(llama, max_position_embeddings=64)),
        # StarCoder2: LayerNorms with biases, a plain GELU MLP, biases, a sliding window of 8.
        "starcoder2": (T.Starcoder2Config, T.Starcoder2ForCausalLM, dict(
            hidden_size=HID, intermediate_size=INTER, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV, max_position_embeddings=64, sliding_window=8, use_bias=True,
            tie_word_embeddings=False, **COMMON)),
        # Mixtral: 4 experts, top 2, renormalised.
        "mixtral": (T.MixtralConfig, T.MixtralForCausalLM, dict(
            llama, max_position_embeddings=64, num_local_experts=4, num_experts_per_tok=2)),
        # Qwen2-MoE: 4 experts of 32, top 2 not renormalised, a sigmoid-gated shared expert;
        # layer 0 dense (mlp_only_layers).
        "qwen2_moe": (T.Qwen2MoeConfig, T.Qwen2MoeForCausalLM, dict(
            llama, max_position_embeddings=64, num_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=32, shared_expert_intermediate_size=48, norm_topk_prob=False,
            mlp_only_layers=[0], use_sliding_window=False)),
        # Qwen3-MoE: q/k norms per head, 4 experts of 32, top 3 renormalised.
        "qwen3_moe": (T.Qwen3MoeConfig, T.Qwen3MoeForCausalLM, dict(
            llama, max_position_embeddings=64, num_experts=4, num_experts_per_tok=3,
            moe_intermediate_size=32, norm_topk_prob=True, use_sliding_window=False)),
        # OLMoE: whole-projection q/k norms, q/k/v clamped, 4 experts top 2 not renormalised.
        "olmoe": (T.OlmoeConfig, T.OlmoeForCausalLM, dict(
            llama, max_position_embeddings=64, num_experts=4, num_experts_per_tok=2, clip_qkv=0.8,
            norm_topk_prob=False)),
        # Gemma 3 text: sandwich and q/k norms, sliding layers (window 8) rotating with their own
        # base, a linear-scaled global rotary; every second layer global here.
        "gemma3": (T.Gemma3TextConfig, T.Gemma3ForCausalLM, dict(
            llama, max_position_embeddings=64, head_dim=16, query_pre_attn_scalar=16, sliding_window=8,
            layer_types=["sliding_attention", "full_attention"], tie_word_embeddings=True,
            rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})),
        # OLMo 3: OLMo 2 with a sliding layer (window 8) and rotary settings per layer type.
        "olmo3": (T.Olmo3Config, T.Olmo3ForCausalLM, dict(
            llama, max_position_embeddings=64, sliding_window=8,
            layer_types=["sliding_attention", "full_attention"],
            rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 500000.0},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 1000.0}})),
        # GPT-J: parallel attention and MLP from one LayerNorm, interleaved rotary over 8 of 16
        # dimensions per head, an LM head with a bias.
        "gptj": (T.GPTJConfig, T.GPTJForCausalLM, dict(
            n_embd=HID, n_layer=LAYERS, n_head=HEADS, n_inner=INTER, n_positions=64, rotary_dim=8,
            tie_word_embeddings=False, **COMMON)),
        # Command R: LayerNorms without bias, parallel residual, interleaved rotary, per-head q/k
        # LayerNorm weights, logit_scale.
        "cohere": (T.CohereConfig, T.CohereForCausalLM, dict(
            llama, max_position_embeddings=64, use_qk_norm=True, logit_scale=0.5,
            tie_word_embeddings=True)),
        # StableLM: partial rotary 0.25, q/k/v biases, per-head q/k LayerNorms, parallel residual.
        "stablelm": (T.StableLmConfig, T.StableLmForCausalLM, dict(
            llama, max_position_embeddings=64, use_qkv_bias=True, qk_layernorm=True,
            use_parallel_residual=True, partial_rotary_factor=0.25)),
        # Command R7B: Cohere with a sliding layer (window 8, rotary) and a global NoPE layer.
        "cohere2": (T.Cohere2Config, T.Cohere2ForCausalLM, dict(
            llama, max_position_embeddings=64, sliding_window=8, logit_scale=0.5,
            layer_types=["sliding_attention", "full_attention"], tie_word_embeddings=True)),
        # EXAONE 4: OLMo 2's block with per-head q/k norms, a sliding layer (window 8, rotary)
        # and a global NoPE layer.
        "exaone4": (T.Exaone4Config, T.Exaone4ForCausalLM, dict(
            llama, max_position_embeddings=64, sliding_window=8,
            layer_types=["sliding_attention", "full_attention"])),
        # GLM-4: sandwich norms, fused gate_up, interleaved rotary on half of each head, biases.
        "glm4": (T.Glm4Config, T.Glm4ForCausalLM, dict(
            llama, max_position_embeddings=64, head_dim=16, attention_bias=True)),
        # ERNIE 4.5: interleaved rotary over the whole head, tied embeddings.
        "ernie4_5": (T.Ernie4_5Config, T.Ernie4_5ForCausalLM, dict(
            llama, max_position_embeddings=64, head_dim=16, tie_word_embeddings=True)),
        # Falcon-7B's layout: multi-query, parallel attention and MLP from one norm, biases off.
        "falcon_7b": (T.FalconConfig, T.FalconForCausalLM, dict(
            hidden_size=HID, num_hidden_layers=LAYERS, num_attention_heads=HEADS, ffn_hidden_size=INTER,
            max_position_embeddings=64, multi_query=True, parallel_attn=True, bias=False,
            tie_word_embeddings=False, **COMMON)),
        # Falcon-40B/180B's layout: kv groups in the fused projection, two parallel norms, biases.
        "falcon_40b": (T.FalconConfig, T.FalconForCausalLM, dict(
            hidden_size=HID, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_kv_heads=KV,
            ffn_hidden_size=INTER, max_position_embeddings=64, new_decoder_architecture=True, bias=True,
            **COMMON)),
        # Falcon with multi-head attention, sequential residual.
        "falcon_seq": (T.FalconConfig, T.FalconForCausalLM, dict(
            hidden_size=HID, num_hidden_layers=LAYERS, num_attention_heads=HEADS, ffn_hidden_size=INTER,
            max_position_embeddings=64, multi_query=False, parallel_attn=False, bias=True, **COMMON)),
        # StarCoder 1 / SantaCoder: GPT-2 with Linear weights and multi-query attention.
        "gpt_bigcode": (T.GPTBigCodeConfig, T.GPTBigCodeForCausalLM, dict(
            n_embd=HID, n_layer=LAYERS, n_head=HEADS, n_inner=INTER, n_positions=64, multi_query=True,
            **COMMON)),
        # DeepSeek-V2 (Lite's layout): multi-head latent attention with a plain q_proj (q_lora_rank
        # null), values narrower than queries and keys (12 vs 8 + 8), rotary pairs on the rope
        # part; layer 0 dense, then 4 experts top 2 (softmax, greedy, times 1.5) + a shared one.
        "deepseek_v2": (T.DeepseekV2Config, T.DeepseekV2ForCausalLM, dict(
            llama, num_key_value_heads=HEADS, max_position_embeddings=64, q_lora_rank=None,
            kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12,
            n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, n_shared_experts=1,
            first_k_dense_replace=1, routed_scaling_factor=1.5, topk_method="greedy")),
        # DeepSeek-V2 (236B's layout): queries through a low-rank bottleneck with its norm,
        # group-limited routing (2 groups, 1 kept), YaRN with the softmax scale's mscale.
        "deepseek_v2_yarn": (T.DeepseekV2Config, T.DeepseekV2ForCausalLM, dict(
            llama, num_key_value_heads=HEADS, max_position_embeddings=64, q_lora_rank=24,
            kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12,
            n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, n_shared_experts=2,
            first_k_dense_replace=1, topk_method="group_limited_greedy", n_group=2, topk_group=1,
            rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                             "original_max_position_embeddings": 16, "mscale": 0.9,
                             "mscale_all_dim": 0.7})),
        # DeepSeek-V3: sigmoid router with e_score_correction_bias choosing within the best of 2
        # groups of 4 experts, renormalised, times 2.5; interleaved rotary; layer 0 dense.
        "deepseek_v3": (T.DeepseekV3Config, T.DeepseekV3ForCausalLM, dict(
            llama, num_key_value_heads=HEADS, max_position_embeddings=64, q_lora_rank=24,
            kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12,
            n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=16, n_shared_experts=1,
            first_k_dense_replace=1, n_group=2, topk_group=1, norm_topk_prob=True,
            routed_scaling_factor=2.5)),
        # DeepSeek-V3 with rotate_half rotary (rope_interleave false), a plain q_proj, weights not
        # renormalised, 4 groups of 2 (2 kept), and YaRN as DeepSeek-V3's config writes it.
        "deepseek_v3_yarn": (T.DeepseekV3Config, T.DeepseekV3ForCausalLM, dict(
            llama, num_key_value_heads=HEADS, max_position_embeddings=64, q_lora_rank=None,
            kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12,
            n_routed_experts=8, num_experts_per_tok=3, moe_intermediate_size=16, n_shared_experts=1,
            first_k_dense_replace=1, n_group=4, topk_group=2, norm_topk_prob=False,
            routed_scaling_factor=1.0, rope_interleave=False,
            rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                             "original_max_position_embeddings": 16, "mscale": 1.0,
                             "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1})),
        # Llama 4 text: rotary pairs on layers 0-2 with L2 q/k norms and attention in chunks of 8
        # positions, a global NoPE layer 3 with query temperature tuning (floor_scale 4); layers 1
        # and 3 mixtures of 4 experts (sigmoid top 2 scaling the expert input) + a shared expert,
        # the dense layers' MLPs intermediate_size_mlp wide.
        "llama4": (T.Llama4TextConfig, T.Llama4ForCausalLM, dict(
            llama, num_hidden_layers=4, head_dim=16, max_position_embeddings=64, intermediate_size=24,
            intermediate_size_mlp=96, num_local_experts=4, num_experts_per_tok=2,
            interleave_moe_layer_step=2, no_rope_layers=[1, 1, 1, 0], attention_chunk_size=8,
            attn_temperature_tuning=True, floor_scale=4, attn_scale=0.1, use_qk_norm=True)),
        # GPTBigCode with multi-head attention (per-head c_attn rows).
        "gpt_bigcode_mha": (T.GPTBigCodeConfig, T.GPTBigCodeForCausalLM, dict(
            n_embd=HID, n_layer=LAYERS, n_head=HEADS, n_inner=INTER, n_positions=64, multi_query=False,
            **COMMON)),
        # BLOOM: ALiBi from the key positions, a norm on the embeddings, per-head fused qkv.
        "bloom": (T.BloomConfig, T.BloomForCausalLM, dict(
            hidden_size=HID, n_layer=LAYERS, n_head=HEADS, **COMMON)),
        # BLOOM with 6 heads (ALiBi slopes of a non-power-of-two head count), residuals from the
        # normed inputs (apply_residual_connection_post_layernorm), an untied head.
        "bloom_6heads": (T.BloomConfig, T.BloomForCausalLM, dict(
            hidden_size=48, n_layer=LAYERS, n_head=6, apply_residual_connection_post_layernorm=True,
            tie_word_embeddings=False, **COMMON)),
        # MPT: ALiBi from the last key, 6 heads (interleaved slopes), q/k/v clamped, no biases.
        "mpt": (T.MptConfig, T.MptForCausalLM, dict(
            d_model=48, n_heads=6, n_layers=LAYERS, max_seq_len=128,
            attn_config={"clip_qkv": 1.5, "alibi_bias_max": 8}, **COMMON)),
        # MPT with 4 heads, an explicit softmax scale, an untied head, and an alibi_bias_max that
        # transformers ignores (MptModel builds its slopes with the default 8).
        "mpt_scaled": (T.MptConfig, T.MptForCausalLM, dict(
            d_model=HID, n_heads=HEADS, n_layers=LAYERS, max_seq_len=128, tie_word_embeddings=False,
            attn_config={"softmax_scale": 0.3, "alibi_bias_max": 4}, **COMMON)),
        # falcon-rw: ALiBi (bfloat16-rounded, through SDPA's mask as HFLM's default attention
        # runs it), multi-head attention, sequential residual, biases.
        "falcon_rw": (T.FalconConfig, T.FalconForCausalLM, dict(
            hidden_size=HID, num_hidden_layers=LAYERS, num_attention_heads=HEADS, ffn_hidden_size=INTER,
            max_position_embeddings=64, alibi=True, multi_query=False, parallel_attn=False, bias=True,
            **COMMON), {"attn": "sdpa"}),
        # GPT-OSS: attention sinks, a sliding (window 8) and a full layer, YaRN without truncation,
        # 4 experts top 2 with biases and a clamped SwiGLU (limit 1.0 so that the clamps bite).
        "gpt_oss": (T.GptOssConfig, T.GptOssForCausalLM, dict(
            hidden_size=HID, intermediate_size=32, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            num_key_value_heads=KV, head_dim=16, num_local_experts=4, num_experts_per_tok=2,
            sliding_window=8, max_position_embeddings=64, swiglu_limit=1.0,
            rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 4.0, "beta_fast": 32.0,
                             "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 16},
            tie_word_embeddings=False, **COMMON)),
    }


def length_dependent(cfg):
    rp = getattr(cfg, "rope_parameters", None) or {}
    return rp.get("rope_type") in ("dynamic", "longrope")


def padding_dependent(cfg):
    """Llama 4's temperature tuning scales NoPE queries by their place in the padded batch (the
    cache position), not by position_ids: a left-padded row gets other numbers than alone, which
    lm-eval does not reproduce (docs/fidelity.md). Its `batched` golden is null, as above."""
    return bool(getattr(cfg, "attn_temperature_tuning", False)) and 0 in (getattr(cfg, "no_rope_layers", None) or [])


def fresh_rope(model):
    """The rotary state of a freshly loaded model (dynamic NTK remembers the longest call)."""
    for mod in model.modules():
        if hasattr(mod, "original_inv_freq") and hasattr(mod, "inv_freq"):
            mod.inv_freq = mod.original_inv_freq.clone()
            if hasattr(mod, "original_max_seq_len"):
                mod.max_seq_len_cached = mod.original_max_seq_len


def randomize(model, seed):
    """Seeded weights where norm gains and biases matter, rounded to float16."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.dim() == 1 and ("norm" in name or "ln" in name) and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
            elif "embed" in name or "lm_head" in name:
                p.copy_(0.15 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.15 * torch.randn(p.shape, generator=g))
            p.copy_(p.half().float())
        # DeepSeek-V3's router bias is a saved buffer (zeros at init): seeded so it moves choices.
        for name, b in sorted(model.named_buffers()):
            if name.endswith("e_score_correction_bias"):
                b.copy_((0.1 * torch.randn(b.shape, generator=g)).half().float())


def r7(x):
    return float(f"{x:.7g}")


def margins(logits):
    top2 = logits.topk(2, dim=-1).values
    return top2[..., 0] - top2[..., 1]


def run(model, **kw):
    fresh_rope(model)
    return model(**kw).logits.float()


def golden_for(model, seqs):
    out = {"inputs": [], "batched": None, "generate": []}
    min_margin = math.inf
    with torch.no_grad():
        for ids in seqs:
            logits = run(model, input_ids=torch.tensor([ids]))[0]
            lp = logits.log_softmax(-1)
            m = margins(logits)
            min_margin = min(min_margin, m.min().item())
            out["inputs"].append({
                "input_ids": ids,
                "next_token_logprobs": [r7(lp[i, ids[i + 1]].item()) for i in range(len(ids) - 1)],
                "sum_logprob": r7(sum(lp[i, ids[i + 1]].item() for i in range(len(ids) - 1))),
                "argmax": lp.argmax(-1).tolist(),
                "last_row_logprobs": [r7(v) for v in lp[-1].tolist()],
                "min_top2_logit_margin": r7(m.min().item()),
            })
        if not length_dependent(model.config) and not padding_dependent(model.config):
            L = max(len(s) for s in seqs)
            pad = model.config.pad_token_id
            ids = torch.tensor([[pad] * (L - len(s)) + s for s in seqs])
            mask = torch.tensor([[0] * (L - len(s)) + [1] * len(s) for s in seqs])
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            lp = run(model, input_ids=ids, attention_mask=mask, position_ids=pos).log_softmax(-1)
            rows, maxdiff = [], 0.0
            for b, s in enumerate(seqs):
                off = L - len(s)
                vals = [lp[b, off + i, s[i + 1]].item() for i in range(len(s) - 1)]
                ref = out["inputs"][b]["next_token_logprobs"]
                maxdiff = max(maxdiff, max(abs(a - r) for a, r in zip(vals, ref)))
                rows.append([r7(v) for v in vals])
            out["batched"] = {"padding_side": "left", "pad_token_id": pad, "input_ids": ids.tolist(),
                              "attention_mask": mask.tolist(), "position_ids": pos.tolist(),
                              "next_token_logprobs_real": rows,
                              "max_abs_diff_vs_unbatched": float(f"{maxdiff:.3g}")}
        for ids in seqs[:2]:
            x = torch.tensor([ids])
            fresh_rope(model)
            g = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, do_sample=False,
                               num_beams=1, eos_token_id=model.config.eos_token_id,
                               pad_token_id=model.config.pad_token_id)
            new = g[0, len(ids):].tolist()
            if not length_dependent(model.config):  # a full re-run recomputes the rotary state
                full = run(model, input_ids=g)[0]
                min_margin = min(min_margin, margins(full[len(ids) - 1: g.shape[1] - 1]).min().item())
            out["generate"].append({"prompt_ids": ids, "max_new_tokens": 20, "new_ids": new,
                                    "stopped_on_eos": bool(len(new) < 20)})
    out["min_top2_logit_margin_all"] = r7(min_margin)
    return out, min_margin


def make_seqs(seed):
    g = torch.Generator().manual_seed(1000 + seed)
    return [[1] + torch.randint(3, VOCAB, (n - 1,), generator=g).tolist() for n in LENGTHS]


def make_mxfp4(outdir):
    """gpt_oss_mxfp4: the gpt_oss fixture with its experts' weights replaced by seeded MXFP4
    blocks and scales (as openai/gpt-oss-* ship them) and quantization_config mxfp4; the goldens
    are transformers' own after it dequantises them on the CPU (to bfloat16, exactly)."""
    from safetensors.torch import load_file, save_file
    src, d = os.path.join(outdir, "gpt_oss"), os.path.join(outdir, "gpt_oss_mxfp4")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cfg = json.load(open(os.path.join(src, "config.json")))
    E, Hd, I = cfg["num_local_experts"], cfg["hidden_size"], cfg["intermediate_size"]
    g = torch.Generator().manual_seed(5)
    tensors = {}
    for k, v in load_file(os.path.join(src, "model.safetensors")).items():
        if not (k.endswith("experts.gate_up_proj") or k.endswith("experts.down_proj")):
            tensors[k] = v
            continue
        rows, cols = (2 * I, Hd) if k.endswith("gate_up_proj") else (Hd, I)
        tensors[k + "_blocks"] = torch.randint(0, 256, (E, rows, cols // 32, 16), generator=g,
                                               dtype=torch.uint8)
        # Scales 2^-6 .. 2^-2 around the float weights' size.
        tensors[k + "_scales"] = torch.randint(121, 126, (E, rows, cols // 32), generator=g,
                                               dtype=torch.uint8)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    cfg["quantization_config"] = {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg, fh, indent=2)
    shutil.copy(os.path.join(src, "generation_config.json"), d)
    model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
    seqs = [x["input_ids"] for x in json.load(open(os.path.join(src, "golden.json")))["inputs"]]
    gold, mm = golden_for(model, seqs)
    gold["meta"] = {"fixture": "gpt_oss_mxfp4", "architecture": "GptOssForCausalLM",
                    "weights": "gpt_oss's, experts as MXFP4 blocks/scales (seed 5)",
                    "dequantised_by": "transformers (Mxfp4HfQuantizer, CPU: dequantize to bf16)",
                    "attn_implementation": model.config._attn_implementation,
                    "torch": torch.__version__, "transformers": transformers.__version__,
                    "logprob_rounding": "7 significant digits",
                    "positions": "next_token_logprobs[i] = log p(input_ids[i+1] | input_ids[:i+1])"}
    with open(os.path.join(d, "golden.json"), "w") as fh:
        json.dump(gold, fh, separators=(",", ":"))
    print("gpt_oss_mxfp4", {"min_margin": r7(mm)}, flush=True)


def main():
    outdir = sys.argv[1]
    only = set(sys.argv[2:])
    if only == {"gpt_oss_mxfp4"}:
        make_mxfp4(outdir)
        return
    for name, (Cfg, Model, kw, *rest) in fixture_specs().items():
        if only and name not in only:
            continue
        # The attention HFLM gets by default where eager gives other numbers (Falcon's ALiBi:
        # eager adds the bias twice, once as the mask); eager elsewhere.
        attn = rest[0].get("attn", "eager") if rest else "eager"
        for seed in range(100):
            torch.manual_seed(seed)
            cfg = Cfg(**kw)
            cfg._attn_implementation = attn
            model = Model(cfg).float().eval()
            randomize(model, seed)
            if getattr(cfg, "tie_word_embeddings", False):
                model.tie_weights()
            seqs = make_seqs(seed)
            gold, mm = golden_for(model, seqs)
            if mm > 3e-3:
                break
        d = os.path.join(outdir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        model.generation_config.do_sample = False
        model.to(torch.float16).save_pretrained(d, safe_serialization=True)
        re = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation=attn).eval()
        gold2, _ = golden_for(re, seqs)
        assert gold2["inputs"] == gold["inputs"] and gold2["generate"] == gold["generate"], name
        gold["meta"] = {"fixture": name, "architecture": Model.__name__, "seed": seed,
                        "weights": "float16 on disk, float32 model", "attn_implementation": attn,
                        "torch": torch.__version__, "transformers": transformers.__version__,
                        "rotary_state": "fresh model per call" if length_dependent(cfg) else "static",
                        "logprob_rounding": "7 significant digits",
                        "positions": "next_token_logprobs[i] = log p(input_ids[i+1] | input_ids[:i+1])"}
        with open(os.path.join(d, "golden.json"), "w") as fh:
            json.dump(gold, fh, separators=(",", ":"))
        print(name, {"seed": seed, "min_margin": gold["min_top2_logit_margin_all"],
                     "n_params": sum(p.numel() for p in model.parameters())}, flush=True)
    if not only or "gpt_oss_mxfp4" in only:
        make_mxfp4(outdir)


if __name__ == "__main__":
    main()

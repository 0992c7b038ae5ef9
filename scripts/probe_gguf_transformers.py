#!/usr/bin/env python3
"""What transformers' own GGUF loader does with MoE, gpt-oss, Falcon-40B and T5 files.

(lm-eval refuses gpt-oss, Falcon-40B and t5 files for the reasons found here; qwen2moe and
qwen3moe it reads natively since, tests/fixtures/gguf's files made by gen_gguf_fixtures.py.)

Usage: VENV/bin/python scripts/probe_gguf_transformers.py OUT_DIR

For qwen3moe, qwen2moe and gpt-oss: a tiny random model built by transformers, written to
OUT_DIR/<arch>.gguf with PyPI's gguf package under llama.cpp's tensor names (experts stacked as
ffn_{gate,up,down}_exps, float32), loaded back with AutoModelForCausalLM.from_pretrained(OUT_DIR,
gguf_file=...), and the maximum difference of its logits from the original model's printed (or the
loader's error). The MoE models use the config classes' default expert sizes, the only ones
transformers 5.23 can map (no key maps expert_feed_forward_length), and Qwen3-MoE the
norm_topk_prob=True that GGUF_CONFIG_DEFAULTS_MAPPING gives a qwen3moe file. For falcon: hf_arch's
falcon_40b written as llama.cpp's FalconModel writes it (two key-value heads), which transformers
reads as FalconConfig's multi-query layout. For t5: hf_arch's flan_t5 (gated-gelu, relative
attention max distance 20) written as llama.cpp's T5Model writes it, loaded with
AutoModelForSeq2SeqLM: the config transformers builds and its logits against the original's.
docs/models.md ("GGUF files") quotes the results.
"""

import json
import re
import sys
from pathlib import Path

import gguf
import numpy as np
import torch
from safetensors.numpy import load_file
from transformers import (AutoModelForCausalLM, AutoModelForSeq2SeqLM, GptOssConfig, GptOssForCausalLM, Qwen2MoeConfig,
                          Qwen2MoeForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM)

HF_ARCH = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hf_arch"


def header(w, cfg, name):
    w.add_name(name)
    w.add_context_length(64)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_expert_count(getattr(cfg, "num_experts", None) or cfg.num_local_experts)
    w.add_expert_used_count(cfg.num_experts_per_tok)


def write_moe(path, model, arch, gguf_arch, interleaved):
    cfg = model.config
    name_map = gguf.get_tensor_name_map(arch, cfg.num_hidden_layers)
    w = gguf.GGUFWriter(str(path), gguf_arch)
    header(w, cfg, gguf_arch)
    if hasattr(cfg, "head_dim") and gguf_arch != "qwen2moe":
        w.add_key_length(cfg.head_dim)
    for k, t in model.state_dict().items():
        t = t.float().numpy()
        bid = re.search(r"layers\.(\d+)\.", k)
        blk = f"blk.{bid[1]}." if bid else ""
        if k.endswith("experts.gate_up_proj"):
            if interleaved:  # GPT-OSS: [E, hidden, 2I], gate and up columns interleaved
                gate, up = t[:, :, ::2].transpose(0, 2, 1), t[:, :, 1::2].transpose(0, 2, 1)
            else:  # [E, 2I, hidden]: gate rows, then up rows
                gate, up = np.split(t, 2, axis=1)
            w.add_tensor(blk + "ffn_gate_exps.weight", np.ascontiguousarray(gate))
            w.add_tensor(blk + "ffn_up_exps.weight", np.ascontiguousarray(up))
        elif k.endswith("experts.gate_up_proj_bias"):
            w.add_tensor(blk + "ffn_gate_exps.bias", np.ascontiguousarray(t[:, ::2]))
            w.add_tensor(blk + "ffn_up_exps.bias", np.ascontiguousarray(t[:, 1::2]))
        elif k.endswith("experts.down_proj"):
            w.add_tensor(blk + "ffn_down_exps.weight",
                         np.ascontiguousarray(t.transpose(0, 2, 1) if interleaved else t))
        elif k.endswith("experts.down_proj_bias"):
            w.add_tensor(blk + "ffn_down_exps.bias", t)
        elif k.endswith("self_attn.sinks"):
            w.add_tensor(blk + "attn_sinks.weight", t)
        else:
            base, suffix = k.rsplit(".", 1)
            gname = name_map.get_name(base)
            if gname is None:
                print(f"  (no GGUF name for {k})")
                continue
            if gname.endswith("ffn_gate_inp_shexp"):
                t = t.reshape(-1)
            w.add_tensor(gname + "." + suffix, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_falcon_40b(path):
    # llama.cpp's FalconModel.modify_tensors: kv groups [q..., k, v] to [q heads; k heads; v heads].
    cfg = json.loads((HF_ARCH / "falcon_40b" / "config.json").read_text())
    weights = load_file(str(HF_ARCH / "falcon_40b" / "model.safetensors"))
    hidden, n_head, kv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_kv_heads"]
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.FALCON, cfg["num_hidden_layers"])
    w = gguf.GGUFWriter(str(path), "falcon")
    w.add_name("falcon 40b")
    w.add_context_length(2048)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(4 * hidden)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(n_head)
    w.add_head_count_kv(kv)
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_vocab_size(cfg["vocab_size"])
    for k, t in weights.items():
        t = t.astype(np.float32)
        base, suffix = k.rsplit(".", 1)
        if base.endswith("query_key_value"):
            g = t.reshape((kv, n_head // kv + 2, hidden // n_head) + t.shape[1:])
            t = np.concatenate([g[:, :-2].reshape((-1,) + t.shape[1:]),
                                g[:, [-2]].reshape((-1,) + t.shape[1:]),
                                g[:, [-1]].reshape((-1,) + t.shape[1:])])
        w.add_tensor(name_map.get_name(base) + "." + suffix, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def probe_t5(out_dir):
    fixture = HF_ARCH / "flan_t5"
    cfg = json.loads((fixture / "config.json").read_text())
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.T5, cfg["num_layers"])
    w = gguf.GGUFWriter(str(out_dir / "t5.gguf"), "t5")
    w.add_name("flan-t5 tiny")
    w.add_context_length(cfg["n_positions"])
    w.add_embedding_length(cfg["d_model"])
    w.add_feed_forward_length(cfg["d_ff"])
    w.add_block_count(cfg["num_layers"])
    w.add_head_count(cfg["num_heads"])
    w.add_key_length(cfg["d_kv"])
    w.add_value_length(cfg["d_kv"])
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_relative_attn_buckets_count(cfg["relative_attention_num_buckets"])
    w.add_decoder_start_token_id(cfg["decoder_start_token_id"])
    w.add_vocab_size(cfg["vocab_size"])
    for k, t in load_file(str(fixture / "model.safetensors")).items():
        base, suffix = k.rsplit(".", 1)
        w.add_tensor(name_map.get_name(base) + "." + suffix, t.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    m = AutoModelForSeq2SeqLM.from_pretrained(str(out_dir), gguf_file="t5.gguf",
                                              dtype=torch.float32).eval()
    original = AutoModelForSeq2SeqLM.from_pretrained(str(fixture), dtype=torch.float32).eval()
    c = m.config
    ids, dec = torch.tensor([[5, 9, 3, 7, 1]]), torch.tensor([[0, 4, 6]])
    with torch.no_grad():
        diff = (m(input_ids=ids, decoder_input_ids=dec).logits -
                original(input_ids=ids, decoder_input_ids=dec).logits).abs().max().item()
    print(f"t5: transformers loads it as is_gated_act {c.is_gated_act}, dense_act_fn "
          f"{c.dense_act_fn} (the checkpoint: {cfg['feed_forward_proj']}), "
          f"relative_attention_max_distance {c.relative_attention_max_distance} (the checkpoint: "
          f"{cfg['relative_attention_max_distance']}); max |logit - original model's| = {diff:.3g}")


def load_back(out_dir, name, original=None):
    try:
        m = AutoModelForCausalLM.from_pretrained(str(out_dir), gguf_file=name + ".gguf",
                                                 dtype=torch.float32)
    except Exception as e:  # the loader's failure is the result
        print(f"{name}: transformers fails: {type(e).__name__}: {str(e).splitlines()[0]}")
        return
    if original is None:
        print(f"{name}: transformers loads it")
        return
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    with torch.no_grad():
        diff = (m(ids).logits - original(ids).logits).abs().max().item()
    print(f"{name}: transformers loads it; max |logit - original model's| = {diff:.3g}")


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    small = dict(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1, num_experts_per_tok=1)
    models = {
        "qwen3moe": (Qwen3MoeForCausalLM(Qwen3MoeConfig(
            **small, intermediate_size=64, head_dim=16, num_experts=2,
            moe_intermediate_size=768, norm_topk_prob=True)), gguf.MODEL_ARCH.QWEN3MOE, False),
        "qwen2moe": (Qwen2MoeForCausalLM(Qwen2MoeConfig(
            **small, intermediate_size=5632, num_experts=2, moe_intermediate_size=1408,
            shared_expert_intermediate_size=5632)), gguf.MODEL_ARCH.QWEN2MOE, False),
        "gpt-oss": (GptOssForCausalLM(GptOssConfig(
            **small, intermediate_size=32, head_dim=64, num_local_experts=2,
            layer_types=["full_attention"])), gguf.MODEL_ARCH.GPT_OSS, True),
    }
    for name, (model, arch, interleaved) in models.items():
        model.eval()
        write_moe(out / (name + ".gguf"), model, arch, name, interleaved)
        load_back(out, name, model)
    write_falcon_40b(out / "falcon_40b.gguf")
    load_back(out, "falcon_40b")
    probe_t5(out)


if __name__ == "__main__":
    main()

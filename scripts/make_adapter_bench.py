#!/usr/bin/env python3
"""Makes the benchmark set of scripts/bench_adapters.sh: a random Llama base (about 75M
parameters, float32, the vocabulary of ../shared/fixtures/llama's tokenizer) and three LoRA
adapters over it made by peft (q/v projections; one with modules_to_save=lm_head; one on the
embeddings), plus a loglikelihood task of 32 requests. Needs torch, transformers and peft.

usage: make_adapter_bench.py OUT_DIR
"""
import json
import os
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=768, intermediate_size=2048,
                      num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,
                      max_position_embeddings=256, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    base = LlamaForCausalLM(cfg)
    base.save_pretrained(os.path.join(out, "base"))
    kinds = {
        "a_qv": dict(target_modules=["q_proj", "v_proj"]),
        "b_mts": dict(target_modules=["q_proj", "v_proj", "down_proj"],
                      modules_to_save=["lm_head"]),
        "c_embed": dict(target_modules=["embed_tokens", "o_proj"]),
    }
    for i, (name, kw) in enumerate(kinds.items()):
        torch.manual_seed(100 + i)
        model = get_peft_model(LlamaForCausalLM.from_pretrained(os.path.join(out, "base")),
                               LoraConfig(r=8, lora_alpha=16, init_lora_weights=False, **kw))
        if "modules_to_save" in kw:
            with torch.no_grad():
                for n, p in model.named_parameters():
                    if "modules_to_save" in n:
                        p.add_(torch.randn_like(p) * 0.01)
        model.save_pretrained(os.path.join(out, name))
    with open(os.path.join(out, "reqs.jsonl"), "w") as f:
        for i in range(32):
            ctx = " ".join(["once upon a time there was a little"] * (1 + i % 4))
            f.write(json.dumps({"ctx": ctx, "cont": " girl who liked to play"}) + "\n")
    with open(os.path.join(out, "reqs.yaml"), "w") as f:
        f.write("task: adapter_bench\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                f"    test: {os.path.join(out, 'reqs.jsonl')}\ntest_split: test\n"
                "output_type: loglikelihood\ndoc_to_text: \"{{ctx}}\"\n"
                "doc_to_target: \"{{cont}}\"\ntarget_delimiter: \"\"\nmetric_list:\n"
                "  - metric: acc\n")


if __name__ == "__main__":
    main()

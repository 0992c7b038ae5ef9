#!/usr/bin/env python3
"""A random-weight 2-layer Llama with head_dim 32 (vLLM CPU attention supports head sizes 32, 64,
..., none below 32: stories260K has 8) and stories260K's tokenizer, for the real-vLLM comparison
of docs/models.md. Usage: VENV/bin/python scripts/make_vllm_cpu_model.py OUT_DIR"""
import os
import shutil
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

out = sys.argv[1]
src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                   "stories260K")
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, head_dim=32,
                  max_position_embeddings=512, bos_token_id=1, eos_token_id=2,
                  tie_word_embeddings=True)
m = LlamaForCausalLM(cfg)
m.save_pretrained(out)
for f in ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model"]:
    try:
        shutil.copy(f"{src}/{f}", f"{out}/{f}")
    except FileNotFoundError:
        pass

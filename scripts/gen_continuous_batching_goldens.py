#!/usr/bin/env python3
"""Goldens for continuous batching (tests/models/hf/continuous_batching_test.cpp): transformers'
greedy `generate` of stories260K (../shared/models/stories260K, a trained model that ends its
stories at EOS) for prompts whose rows end at different steps, each prompt alone (no padding),
float32. Each row records its new ids (EOS included when it ended the row) and the smallest
top-2 logit margin over its steps, so the test can tell a real difference from a near tie.

Usage (torch and transformers, CPU):
    VENV/bin/python scripts/gen_continuous_batching_goldens.py ../shared/models/stories260K \\
        tests/fixtures/continuous_batching/stories260K.json
"""
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

# Prompts sharing a few-shot-like header (prefix sharing) and prompts of their own; with EOS
# the rows end at different steps.
HEADER = "Once upon a time, there was a little girl named Lily. She loved to play outside."
PROMPTS = [
    HEADER + " One day,",
    HEADER + " Her mom said",
    HEADER + " Lily saw a big",
    "Tom had a big red ball. He",
    "The cat sat on the mat and",
    "One day, a little bird",
    "Sam and Mia went to the park. They",
    "The sun was hot.",
    "Ben liked to eat",
    "A dog ran",
]
MAX_NEW = 160


def main(model_dir, out_path):
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    rows = []
    for text in PROMPTS:
        ids = tok(text, return_tensors="pt").input_ids
        with torch.no_grad():
            g = model.generate(ids, max_new_tokens=MAX_NEW, do_sample=False, num_beams=1,
                               eos_token_id=2, pad_token_id=0, output_scores=True,
                               return_dict_in_generate=True)
        new = g.sequences[0, ids.shape[1]:].tolist()
        margin = min(float((s[0].topk(2).values[0] - s[0].topk(2).values[1])) for s in g.scores)
        rows.append({"prompt": text, "prompt_ids": ids[0].tolist(), "new_ids": new,
                     "ended_at_eos": new[-1] == 2, "min_top2_margin": margin})
    out = {"model": "stories260K", "dtype": "float32", "max_new_tokens": MAX_NEW, "eos_id": 2,
           "dot_id": tok.convert_tokens_to_ids("."),
           "transformers": transformers.__version__, "torch": torch.__version__, "rows": rows}
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/env python3
"""PEFT adapters beyond plain LoRA over the tiny base models of tests/fixtures/hf_ckpt (made by
scripts/gen_ckpt_fixtures.py; run that first), saved by peft's own save_pretrained, with goldens
from peft and from the reference's HFLM (lm_eval 0.4.13) in tests/fixtures/hf_ckpt/peft_goldens.json.

Adapters (every trainable tensor perturbed so that each matters):
- dora_llama: LoRA with use_dora over q_proj, v_proj, down_proj and the embedding (DoRA's
  magnitude per output row; the embedding's per embedding dimension);
- dora_gpt2: DoRA over GPT-2's Conv1D layers (c_attn, c_fc: weights stored [in, out]);
- ia3_llama: IA3 over k_proj, v_proj (outputs scaled) and down_proj (feedforward: input scaled);
- ia3_gpt2: IA3 over c_attn (output scaled, its bias too) and c_fc, c_proj given as feedforward
  by a regular expression;
- loha_llama: LoHa over q_proj, v_proj and down_proj, an alpha_pattern for v_proj;
- lokr_llama: LoKr over q_proj (rank 1: both Kronecker factors decomposed) and up_proj (w1
  whole, w2 decomposed);
- adalora_llama: AdaLoRA, which lm-eval does not merge itself (it runs through transformers +
  peft).
Goldens: `adapters` (peft's unmerged PeftModel in float32: next-token log-probs of INPUTS) and
`hflm` (lm_eval.models.huggingface.HFLM.loglikelihood with peft=; paths relative to
tests/fixtures/hf_ckpt, `tokenizer` filled in by the tests).

Usage (torch 2.15.0, transformers 5.23.0, peft 0.21.2, lm_eval 0.4.13; CPU):
    python scripts/gen_peft_fixtures.py ../shared/fixtures/llama tests/fixtures/hf_ckpt
"""
import json
import os
import shutil
import sys

import torch
import transformers

INPUTS = [[1, 45, 300, 12, 7, 499, 88, 23, 5, 61], [1, 400, 2, 3, 150, 77, 270, 19]]
REQUESTS = [["Once upon a time", " there was a little girl."],
            ["The cat sat", " on the mat and looked at the sun."],
            ["", "Lily liked to play."]]


def next_token_logprobs(model):
    out = []
    with torch.no_grad():
        for ids in INPUTS:
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            out.append([lp[i, ids[i + 1]].item() for i in range(len(ids) - 1)])
    return out


def perturbed(peft_model, seed):
    """Moves every trainable tensor (factors, magnitudes, IA3 vectors)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in peft_model.named_parameters():
            if p.requires_grad:
                p.add_(0.2 * torch.randn(p.shape, generator=g))
    return peft_model.eval()


def specs():
    from peft import AdaLoraConfig, IA3Config, LoHaConfig, LoKrConfig, LoraConfig
    return {
        "dora_llama": ("llama", LoraConfig(
            r=4, lora_alpha=8, use_dora=True, init_lora_weights=False,
            target_modules=["q_proj", "v_proj", "down_proj", "embed_tokens"])),
        "dora_gpt2": ("gpt2", LoraConfig(
            r=2, lora_alpha=4, use_dora=True, init_lora_weights=False, fan_in_fan_out=True,
            target_modules=["c_attn", "c_fc"])),
        "ia3_llama": ("llama", IA3Config(
            target_modules=["k_proj", "v_proj", "down_proj"], feedforward_modules=["down_proj"],
            init_ia3_weights=True)),
        "ia3_gpt2": ("gpt2", IA3Config(
            target_modules=["c_attn", "c_fc", "c_proj"], feedforward_modules=r".*mlp\.c_(fc|proj)",
            fan_in_fan_out=True)),
        "loha_llama": ("llama", LoHaConfig(
            r=2, alpha=4, target_modules=["q_proj", "v_proj", "down_proj"],
            alpha_pattern={"v_proj": 3}, init_weights=False)),
        "lokr_llama": ("llama", LoKrConfig(
            r=2, alpha=3, target_modules=["q_proj", "up_proj"], decompose_both=True,
            rank_pattern={"q_proj": 1}, decompose_factor=4, init_weights=False)),
        "adalora_llama": ("llama", AdaLoraConfig(
            init_r=4, target_r=2, total_step=10, lora_alpha=8, target_modules=["q_proj", "v_proj"])),
    }


def write_adapters(out):
    from peft import PeftModel, get_peft_model

    goldens = {}
    for i, (name, (kind, cfg)) in enumerate(specs().items()):
        base_dir = f"{out}/{kind}"
        shutil.rmtree(f"{out}/{name}", ignore_errors=True)
        base = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        perturbed(get_peft_model(base, cfg), 200 + i).save_pretrained(f"{out}/{name}")
        fresh = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        loaded = PeftModel.from_pretrained(fresh, f"{out}/{name}").eval()
        goldens[name] = {"base": kind, "inputs": INPUTS,
                         "next_token_logprobs": next_token_logprobs(loaded)}
        plain = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        assert next_token_logprobs(plain.eval()) != goldens[name]["next_token_logprobs"], name
    return goldens


def hflm_goldens(out, tokenizer_dir):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    goldens = []
    for name, (kind, _) in specs().items():
        lm = HFLM(pretrained=f"{out}/{kind}", peft=f"{out}/{name}", tokenizer=tokenizer_dir,
                  device="cpu", dtype="float32", batch_size=1)
        reqs = [Instance("loglikelihood", {}, tuple(r), i) for i, r in enumerate(REQUESTS)]
        res = lm.loglikelihood(reqs)
        goldens.append({"model_args": {"pretrained": kind, "peft": name}, "requests": REQUESTS,
                        "loglikelihood": [r[0] for r in res], "is_greedy": [r[1] for r in res]})
    return goldens


def main():
    tokenizer_dir, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    goldens = {"adapters": write_adapters(out), "hflm": hflm_goldens(out, tokenizer_dir)}
    goldens["meta"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                       "peft": __import__("peft").__version__,
                       "lm_eval": __import__("importlib.metadata").metadata.version("lm_eval")}
    # peft writes the base folder's path into adapter_config.json (kept relative) and a model card
    # (left out).
    for name in specs():
        if os.path.exists(f"{out}/{name}/README.md"):
            os.remove(f"{out}/{name}/README.md")
        cfg = f"{out}/{name}/adapter_config.json"
        with open(cfg) as f:
            c = json.load(f)
        c["base_model_name_or_path"] = os.path.basename(c["base_model_name_or_path"] or "")
        # peft saves sets as lists in hash order: sorted, so that a rerun writes the same file.
        for k in ("target_modules", "feedforward_modules"):
            if isinstance(c.get(k), list):
                c[k] = sorted(c[k])
        with open(cfg, "w") as f:
            json.dump(c, f, indent=2, sort_keys=True)
    with open(f"{out}/peft_goldens.json", "w") as f:
        json.dump(goldens, f, indent=1)


if __name__ == "__main__":
    main()

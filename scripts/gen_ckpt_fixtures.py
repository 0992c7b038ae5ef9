#!/usr/bin/env python3
"""Checkpoint formats, PEFT LoRA adapters and delta weights for the hf backend's weight loading
(tests/fixtures/hf_ckpt/), with goldens from torch, transformers, peft and the reference's HFLM
(lm_eval 0.4.13) itself in tests/fixtures/hf_ckpt/goldens.json.

Models are tiny random-weight Llamas and GPT-2s (vocabulary 512: the stories260K tokenizer of
../shared/fixtures/llama, which the tests pass as tokenizer=; hidden size 16, 2 layers):
- weight formats of one Llama, all holding the same float32 numbers: model.safetensors (the
  twin), torch.save's zip format, its legacy format, two index-named shards, a state dict of
  strided views (transposed, offset into a larger storage, tensors sharing a storage), a folder
  with both model.safetensors and a pytorch_model.bin of other weights (safetensors wins), and a
  bfloat16 pair (model.safetensors and pytorch_model.bin);
- delta weights (HFLM's delta=) for the Llama and for a GPT-2 with tied embeddings;
- LoRA adapters saved by peft's save_pretrained, every trainable tensor perturbed so that each
  matters: target lists and regexes, rsLoRA, rank_pattern/alpha_pattern, layers_to_transform,
  exclude_modules, modules_to_save, an embedding target, a .bin adapter, GPT-2's Conv1D
  layers with bias="all" and lora_bias, and two adapters that do not fit the base (trained on a wider
  model; naming a layer the base lacks).
Goldens: `formats` (transformers' next-token log-probs of each format folder), `adapters`
(peft's unmerged PeftModel in float32), `delta` (the reference's `param.data += delta` loop) and
`hflm` (lm_eval.models.huggingface.HFLM.loglikelihood with the same model_args lm-eval is given;
paths in model_args are relative to tests/fixtures/hf_ckpt, and `tokenizer` is filled in by the
tests).

Usage (torch 2.15.0, transformers 5.23.0, peft 0.21.2, lm_eval 0.4.13; CPU):
    python scripts/gen_ckpt_fixtures.py ../shared/fixtures/llama tests/fixtures/hf_ckpt
"""
import json
import os
import shutil
import sys

import torch
import transformers
from safetensors.torch import save_file

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
INPUTS = [[1, 45, 300, 12, 7, 499, 88, 23, 5, 61], [1, 400, 2, 3, 150, 77, 270, 19]]
REQUESTS = [["Once upon a time", " there was a little girl."],
            ["The cat sat", " on the mat and looked at the sun."],
            ["", "Lily liked to play."]]


def llama_config(hidden=16):
    return transformers.LlamaConfig(
        vocab_size=512, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
        pad_token_id=0, attn_implementation="eager")


def gpt2_config():
    return transformers.GPT2Config(
        vocab_size=512, n_embd=16, n_layer=2, n_head=2, n_positions=64, bos_token_id=1,
        eos_token_id=2, pad_token_id=0, attn_implementation="eager")


def randomized(model, seed):
    """Redraws every parameter from a seeded generator (norm gains around 1, biases small)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or ".ln_" in name or "ln_f" in name:
                if name.endswith("weight"):
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(0.05 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
    model.tie_weights()
    return model.eval()


def make(kind, seed, hidden=16):
    if kind == "llama":
        m = transformers.LlamaForCausalLM(llama_config(hidden))
    else:
        m = transformers.GPT2LMHeadModel(gpt2_config())
    return randomized(m, seed)


def next_token_logprobs(model):
    out = []
    with torch.no_grad():
        for ids in INPUTS:
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            out.append([lp[i, ids[i + 1]].item() for i in range(len(ids) - 1)])
    return out


def save_config(model, folder, dtype=None):
    os.makedirs(folder, exist_ok=True)
    model.config.architectures = [type(model).__name__]  # as save_pretrained writes it
    if dtype is not None:
        model.config.dtype = dtype
    model.config.save_pretrained(folder)


def state_dict(model):
    # What save_pretrained writes: tied lm_head.weight left out.
    sd = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_word_embeddings", False):
        sd.pop("lm_head.weight", None)
    return sd


def write_formats(out, base, other):
    sd = state_dict(base)
    save_config(base, f"{out}/llama")
    save_file(sd, f"{out}/llama/model.safetensors", metadata={"format": "pt"})

    save_config(base, f"{out}/llama_bin")
    torch.save(sd, f"{out}/llama_bin/pytorch_model.bin")

    save_config(base, f"{out}/llama_bin_legacy")
    torch.save(sd, f"{out}/llama_bin_legacy/pytorch_model.bin",
               _use_new_zipfile_serialization=False)

    save_config(base, f"{out}/llama_bin_sharded")
    names = list(sd)
    half = len(names) // 2
    shards = {"pytorch_model-00001-of-00002.bin": names[:half],
              "pytorch_model-00002-of-00002.bin": names[half:]}
    weight_map = {}
    for shard, keys in shards.items():
        torch.save({k: sd[k] for k in keys}, f"{out}/llama_bin_sharded/{shard}")
        weight_map.update({k: shard for k in keys})
    with open(f"{out}/llama_bin_sharded/pytorch_model.bin.index.json", "w") as f:
        json.dump({"metadata": {"total_size": sum(v.numel() * 4 for v in sd.values())},
                   "weight_map": weight_map}, f, indent=2)

    # Strided views as torch.save keeps them: a transposed copy seen through .t(), a slice at an
    # offset into a larger storage, and two tensors over one storage.
    strided = dict(sd)
    q = "model.layers.0.self_attn.q_proj.weight"
    strided[q] = sd[q].t().contiguous().t()
    k = "model.layers.1.mlp.up_proj.weight"
    big = torch.cat([torch.randn(3, sd[k].shape[1]), sd[k], torch.randn(2, sd[k].shape[1])])
    strided[k] = big[3:3 + sd[k].shape[0]]
    n0, n1 = "model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight"
    pair = torch.stack([sd[n0], sd[n1]])
    strided[n0], strided[n1] = pair[0], pair[1]
    assert not strided[q].is_contiguous() and strided[k].storage_offset() > 0
    save_config(base, f"{out}/llama_bin_strided")
    torch.save(strided, f"{out}/llama_bin_strided/pytorch_model.bin")

    # Both formats: transformers reads model.safetensors; the .bin holds other weights.
    save_config(base, f"{out}/llama_both")
    save_file(sd, f"{out}/llama_both/model.safetensors", metadata={"format": "pt"})
    torch.save(state_dict(other), f"{out}/llama_both/pytorch_model.bin")

    bf = {k: v.to(torch.bfloat16) for k, v in sd.items()}
    for name in ("llama_bf16", "llama_bf16_bin"):
        save_config(base, f"{out}/{name}", dtype="bfloat16")
    save_file(bf, f"{out}/llama_bf16/model.safetensors", metadata={"format": "pt"})
    torch.save(bf, f"{out}/llama_bf16_bin/pytorch_model.bin")
    base.config.dtype = "float32"

    goldens = {}
    for name in ("llama", "llama_bin", "llama_bin_legacy", "llama_bin_sharded",
                 "llama_bin_strided", "llama_both", "llama_bf16", "llama_bf16_bin"):
        m = transformers.AutoModelForCausalLM.from_pretrained(f"{out}/{name}", dtype=torch.float32)
        goldens[name] = {"inputs": INPUTS, "next_token_logprobs": next_token_logprobs(m.eval())}
    assert goldens["llama_bin"] == goldens["llama"] and goldens["llama_both"] == goldens["llama"]
    assert goldens["llama_bf16"] == goldens["llama_bf16_bin"]
    return goldens


def save_model(model, folder):
    save_config(model, folder)
    save_file(state_dict(model), f"{folder}/model.safetensors", metadata={"format": "pt"})


def perturbed(peft_model, seed):
    """Moves every trainable tensor (LoRA factors, modules_to_save copies, trained biases)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in peft_model.named_parameters():
            if p.requires_grad:
                p.add_(0.2 * torch.randn(p.shape, generator=g))
    return peft_model.eval()


def write_adapters(out, llama_dir, gpt2_dir):
    from peft import LoraConfig, PeftModel, get_peft_model

    specs = {
        "lora_plain": ("llama", dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]), {}),
        "lora_regex": ("llama", dict(
            r=4, lora_alpha=6, use_rslora=True,
            target_modules=r".*\.(k_proj|o_proj|gate_proj|down_proj)",
            rank_pattern={"down_proj": 2}, alpha_pattern={r"layers\.1\.self_attn\.o_proj": 3}), {}),
        "lora_layers": ("llama", dict(r=2, lora_alpha=4, target_modules=["q_proj", "up_proj", "o_proj"],
                                      layers_to_transform=[1], exclude_modules=["o_proj"]), {}),
        "lora_mts": ("llama", dict(r=2, lora_alpha=4, target_modules=["v_proj"],
                                   modules_to_save=["lm_head"]), {}),
        "lora_embed": ("llama", dict(r=3, lora_alpha=5, target_modules=["embed_tokens", "down_proj"]), {}),
        "lora_bin": ("llama", dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]),
                     {"safe_serialization": False}),
        "gpt2_lora": ("gpt2", dict(r=2, lora_alpha=4, target_modules=["c_attn", "c_proj", "c_fc"],
                                   bias="all", lora_bias=True, fan_in_fan_out=True), {}),
    }
    goldens = {}
    for i, (name, (kind, cfg, save_kw)) in enumerate(specs.items()):
        base_dir = llama_dir if kind == "llama" else gpt2_dir
        base = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        peft_model = perturbed(get_peft_model(base, LoraConfig(init_lora_weights=False, **cfg)), 100 + i)
        peft_model.save_pretrained(f"{out}/{name}", **save_kw)
        # The golden is the adapter as peft loads it from disk onto a fresh base.
        fresh = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        loaded = PeftModel.from_pretrained(fresh, f"{out}/{name}").eval()
        goldens[name] = {"base": kind, "inputs": INPUTS,
                         "next_token_logprobs": next_token_logprobs(loaded)}
        # Not the base's numbers: the adapter changes them.
        plain = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        assert next_token_logprobs(plain.eval()) != goldens[name]["next_token_logprobs"], name

    # An adapter of a wider Llama (hidden 24): its factors do not fit the base.
    wide = make("llama", 5, hidden=24)
    perturbed(get_peft_model(wide, LoraConfig(r=2, target_modules=["q_proj"], init_lora_weights=False)),
              7).save_pretrained(f"{out}/lora_other_base")
    # An adapter naming a layer the base lacks (layer 5 of a 2-layer model).
    from safetensors.torch import load_file
    shutil.copytree(f"{out}/lora_plain", f"{out}/lora_missing_module")
    sd = load_file(f"{out}/lora_missing_module/adapter_model.safetensors")
    sd = {k.replace("layers.1.", "layers.5."): v for k, v in sd.items()}
    save_file(sd, f"{out}/lora_missing_module/adapter_model.safetensors")
    return goldens


def delta_golden(base_dir, delta_dir):
    """HFLM._create_model's delta loop, over the state dicts of the loaded models."""
    model = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    delta = transformers.AutoModelForCausalLM.from_pretrained(delta_dir, dtype=torch.float32)
    for name, param in model.state_dict().items():
        param.data += delta.state_dict()[name]
    return {"inputs": INPUTS, "next_token_logprobs": next_token_logprobs(model.eval())}


def hflm_goldens(out, tokenizer_dir):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    cases = [
        {"pretrained": "llama_bin"},
        {"pretrained": "llama_bin_legacy"},
        {"pretrained": "llama", "peft": "lora_plain"},
        {"pretrained": "llama", "peft": "lora_mts"},
        {"pretrained": "gpt2", "peft": "gpt2_lora"},
        {"pretrained": "llama", "delta": "llama_delta"},
        {"pretrained": "gpt2", "delta": "gpt2_delta"},
        {"pretrained": "sub", "subfolder": "model"},
    ]
    goldens = []
    for case in cases:
        args = {k: (v if k == "subfolder" else f"{out}/{v}") for k, v in case.items()}
        if "subfolder" not in case:
            args["tokenizer"] = tokenizer_dir
        lm = HFLM(device="cpu", dtype="float32", batch_size=1, **args)
        assert lm.vocab_size == 512 or len(lm.tokenizer) == 512
        reqs = [Instance("loglikelihood", {}, tuple(r), i) for i, r in enumerate(REQUESTS)]
        res = lm.loglikelihood(reqs)
        goldens.append({"model_args": case, "requests": REQUESTS,
                        "loglikelihood": [r[0] for r in res], "is_greedy": [r[1] for r in res]})
    return goldens


def rounding_goldens():
    """torch's float32 -> float16 / bfloat16 -> float32 round trips (ties, subnormals, overflow)."""
    g = torch.Generator().manual_seed(9)
    values = torch.cat([
        torch.tensor([0.0, -0.0, 1.0, 1.00048828125, 1.000732421875, 1.00390625, 1.005859375,
                      65504.0, 65519.0, 65520.0, 1e6, -1e6, 6e-8, 2.9802322e-8, 1e-5, 3.0e38,
                      -3.4e38, 1e-40]),
        torch.randn(64, generator=g) * 10 ** torch.randint(-8, 8, (64,), generator=g).float()])
    # JSON has no infinities: they are written as the strings "inf" and "-inf".
    as_list = lambda t: [v if abs(v) != float("inf") else str(v) for v in t.tolist()]  # noqa: E731
    return {"float32": as_list(values), "float16": as_list(values.half().float()),
            "bfloat16": as_list(values.bfloat16().float())}


def main():
    tokenizer_dir, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    llama, llama_delta = make("llama", 1), make("llama", 2)
    gpt2, gpt2_delta = make("gpt2", 3), make("gpt2", 4)
    goldens = {"formats": write_formats(out, llama, llama_delta)}
    save_model(llama_delta, f"{out}/llama_delta")
    save_model(gpt2, f"{out}/gpt2")
    save_model(gpt2_delta, f"{out}/gpt2_delta")
    save_model(llama, f"{out}/sub/model")
    for f in TOKENIZER_FILES:
        shutil.copy(f"{tokenizer_dir}/{f}", f"{out}/sub/model/{f}")
    goldens["adapters"] = write_adapters(out, f"{out}/llama", f"{out}/gpt2")
    goldens["delta"] = {"llama": delta_golden(f"{out}/llama", f"{out}/llama_delta"),
                        "gpt2": delta_golden(f"{out}/gpt2", f"{out}/gpt2_delta")}
    goldens["hflm"] = hflm_goldens(out, tokenizer_dir)
    goldens["rounding"] = rounding_goldens()
    goldens["meta"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                       "peft": __import__("peft").__version__,
                       "lm_eval": __import__("importlib.metadata").metadata.version("lm_eval")}
    # peft writes the base folder's path into adapter_config.json (keep it relative) and a model
    # card (left out).
    for name in os.listdir(out):
        if os.path.exists(f"{out}/{name}/README.md"):
            os.remove(f"{out}/{name}/README.md")
        cfg = f"{out}/{name}/adapter_config.json"
        if os.path.exists(cfg):
            with open(cfg) as f:
                c = json.load(f)
            c["base_model_name_or_path"] = os.path.basename(c["base_model_name_or_path"] or "")
            with open(cfg, "w") as f:
                json.dump(c, f, indent=2, sort_keys=True)
    with open(f"{out}/goldens.json", "w") as f:
        json.dump(goldens, f, indent=1)


if __name__ == "__main__":
    main()

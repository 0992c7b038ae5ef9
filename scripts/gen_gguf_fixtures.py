#!/usr/bin/env python3
"""Tiny GGUF files and transformers' own numbers for them (tests/fixtures/gguf).

Usage: VENV/bin/python scripts/gen_gguf_fixtures.py SHARED/fixtures tests/fixtures/gguf

Writes, with PyPI's `gguf` package (gguf.GGUFWriter, gguf.quants.quantize / dequantize):
  * <name>.gguf: shared/fixtures' tiny llama, mistral and qwen2 models converted as llama.cpp's
    convert_hf_to_gguf.py lays them out (its tensor names, 2-D weights quantised, norms and
    biases F32, Q and K rows of the llama architecture permuted as its LlamaModel.permute does),
    at the quantisation types named in MODELS below.
  * golden.json: for each file, what transformers computes after loading it with
    AutoModelForCausalLM.from_pretrained(folder, gguf_file=name) in float32: next-token
    log-probs, argmaxes and last-row log-softmax of the fixture's three inputs, and the
    log-likelihoods of a few text requests encoded as HFLM encodes them (with the llama
    fixture's tokenizer, which the GGUFs do not carry).
  * dequant.json: for every ggml type gguf.quants can dequantise, random blocks (hex) and
    gguf.quants.dequantize's float32 output of them (hex, little-endian).
"""

import json
import sys
from pathlib import Path

import gguf
import numpy as np
import torch
from gguf import GGMLQuantizationType as T
from safetensors.numpy import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer

# name: (fixture, GGUF architecture, general.name, {tensor-name pattern: type}, default type)
MODELS = {
    "llama_q4_0": ("llama", "llama", "tiny llama", {}, T.Q4_0),
    # Every block-32 type and the float types in one file, layer by layer.
    "llama_mixed": ("llama", "llama", "tiny llama mixed", {
        "token_embd": T.Q8_0, "output.weight": T.Q4_1,
        "blk.0.attn_q": T.Q5_0, "blk.0.attn_k": T.Q5_1, "blk.0.attn_v": T.Q8_0,
        "blk.0.attn_output": T.Q4_0, "blk.0.ffn_up": T.BF16, "blk.0.ffn_gate": T.Q5_1,
        "blk.0.ffn_down": T.Q4_1, "blk.1.attn_q": T.F16, "blk.1.attn_k": T.BF16,
        "blk.1.attn_v": T.Q4_1, "blk.1.attn_output": T.Q5_0, "blk.1.ffn_down": T.F16,
        "blk.1.ffn_up": T.Q8_0, "blk.1.ffn_gate": T.Q4_0,
    }, T.Q4_0),
    # A Mistral converted by llama.cpp is a llama GGUF, and transformers reads it as Llama
    # (LlamaConfig: no sliding window) unless general.name is exactly "mistral":
    # load_gguf_checkpoint tests `"mistral" in model_name`, model_name being a list.
    "mistral_q5_1": ("mistral", "llama", "Mistral tiny", {}, T.Q5_1),
    "qwen2_q5_0": ("qwen2", "qwen2", "tiny qwen2", {}, T.Q5_0),
}

REQUESTS = [
    ("Once upon a time", " there was a little girl"),
    ("The cat sat on the", " mat."),
    ("Tom and Lily", " went to the park to play"),
]

ARCH = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2}


def permute(w, n_head):
    # llama.cpp's convert_hf_to_gguf.py LlamaModel.permute: rotary pairs interleaved.
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(path, fixture_dir, arch, name, types, default):
    cfg = json.loads((fixture_dir / "config.json").read_text())
    weights = load_file(str(fixture_dir / "model.safetensors"))
    n_layers = cfg["num_hidden_layers"]
    name_map = gguf.get_tensor_name_map(ARCH[arch], n_layers)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(n_layers)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_parameters"]["rope_theta"])
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(cfg["vocab_size"])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    w.add_pad_token_id(cfg["pad_token_id"])
    w.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_0))
    for hf_name, t in weights.items():
        base, suffix = hf_name.rsplit(".", 1)
        gname = name_map.get_name(base) + "." + suffix
        t = t.astype(np.float32)
        if arch == "llama" and gname.endswith("attn_q.weight"):
            t = permute(t, cfg["num_attention_heads"])
        if arch == "llama" and gname.endswith("attn_k.weight"):
            t = permute(t, cfg["num_key_value_heads"])
        qtype = T.F32
        if t.ndim == 2:
            qtype = default
            for pat, qt in types.items():
                if gname.startswith(pat):
                    qtype = qt
        if qtype == T.F32:
            w.add_tensor(gname, t)
        elif qtype == T.F16:
            w.add_tensor(gname, t.astype(np.float16))
        else:
            w.add_tensor(gname, gguf.quants.quantize(t, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def goldens(out_dir, name, fixture_dir):
    model = AutoModelForCausalLM.from_pretrained(str(out_dir), gguf_file=name + ".gguf",
                                                 dtype=torch.float32)
    model.eval()
    fixture_golden = json.loads((fixture_dir / "golden.json").read_text())
    # Every fixture has the same tokenizer files; the llama folder's is read for all, since
    # transformers 5's AutoTokenizer builds another tokenizer from the same files in the qwen2
    # folder (its config.json's model_type chooses the class).
    tok = AutoTokenizer.from_pretrained(str(fixture_dir.parent / "llama"))
    g = {"config": {k: v for k, v in model.config.to_dict().items()
                    if k in ("model_type", "head_dim", "sliding_window", "tie_word_embeddings",
                             "num_key_value_heads", "max_position_embeddings", "rope_parameters",
                             "rms_norm_eps", "vocab_size", "bos_token_id", "eos_token_id")},
         "inputs": [], "requests": []}
    with torch.no_grad():
        for inp in fixture_golden["inputs"]:
            ids = inp["input_ids"]
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            nxt = [lp[i, ids[i + 1]].item() for i in range(len(ids) - 1)]
            g["inputs"].append({"input_ids": ids, "next_token_logprobs": nxt,
                                "argmax": lp.argmax(-1).tolist(),
                                "last_row_logprobs": lp[-1].tolist()})
        for ctx, cont in REQUESTS:
            # HFLM._encode_pair: the whole encoded, the context's tokens cut off its front.
            whole = tok(ctx + cont)["input_ids"]
            ctx_ids = tok(ctx)["input_ids"]
            cont_ids = whole[len(ctx_ids):]
            lp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
            n = len(ctx_ids)
            total = sum(lp[n - 1 + i, c].item() for i, c in enumerate(cont_ids))
            greedy = all(lp[n - 1 + i].argmax().item() == c for i, c in enumerate(cont_ids))
            g["requests"].append({"context": ctx, "continuation": cont, "context_ids": ctx_ids,
                                  "continuation_ids": cont_ids, "logprob": total,
                                  "is_greedy": greedy})
    return g


def dequant_goldens():
    rng = np.random.default_rng(29)
    out = {}
    for qtype in T:
        if qtype in (T.F64, T.I8, T.I16, T.I32, T.I64):
            continue
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        nblocks = 4 if block < 256 else 2
        if block == 1:
            nblocks = 64
        for _ in range(100):
            raw = rng.integers(0, 256, size=nblocks * size, dtype=np.uint8)
            try:
                vals = gguf.quants.dequantize(raw, qtype).astype(np.float32)
            except NotImplementedError:
                vals = None
                break
            if np.all(np.isfinite(vals)):
                break
        if vals is None:
            continue
        out[qtype.name] = {"type": int(qtype), "elements": int(vals.size),
                           "blocks_hex": raw.tobytes().hex(),
                           "float32_hex": vals.astype("<f4").tobytes().hex()}
    return out


def main():
    fixtures, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    golden = {"meta": {"gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
                       "transformers": __import__("transformers").__version__,
                       "torch": torch.__version__}, "models": {}}
    for name, (fixture, arch, gname, types, default) in MODELS.items():
        write_gguf(out_dir / (name + ".gguf"), fixtures / fixture, arch, gname, types, default)
        golden["models"][name] = goldens(out_dir, name, fixtures / fixture)
        golden["models"][name]["fixture"] = fixture
    (out_dir / "golden.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    (out_dir / "dequant.json").write_text(json.dumps(dequant_goldens(), indent=0) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the reference (lm_eval's HFLM over transformers) and lm-eval's hf backend side by side on
a zoo of tiny random-weight models, one per architecture lm-eval runs natively, and prints one line
per architecture: the largest loglikelihood difference, is_greedy agreement, the largest rolling
loglikelihood difference (relative) and how many generations are identical.

The zoo is made here from fixed seeds, never committed: each architecture of
scripts/gen_hf_arch_fixtures.py (and the common ones of ../shared/fixtures' kinds) with the
stories260K tokenizer (vocab 512) and float32 weights, so that real text goes through both
tokenisers. The requests are those of scripts/compare_hf_reference.py. The encoder-decoder shapes
of scripts/gen_hf_seq2seq_fixtures.py (T5 v1.0, Flan-T5) join them with a T5-style Unigram
tokenizer trained there (no BOS, </s> appended), and run with batch_size 1 on both sides: a
seq2seq generation may run as long as the batch's padded context plus max_gen_toks, so the batch
must be the reference's.

Environment: torch 2.15.0, transformers 5.23.0, lm-eval 0.4.13 (CPU), e.g.
    python3 -m venv .venv-zoo && .venv-zoo/bin/pip install torch==2.15.0 transformers==5.23.0 lm-eval==0.4.13
Usage: .venv-zoo/bin/python scripts/compare_hf_zoo.py BUILD_DIR ZOO_DIR [ARCH ...]
"""
import copy
import importlib.util
import json
import os
import shutil
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER = os.path.join(ROOT, "..", "shared", "models", "stories260K")
VOCAB = 512


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def zoo_specs(fix):
    T = fix.transformers
    specs = fix.fixture_specs()
    base = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=256, bos_token_id=1, eos_token_id=2,
                pad_token_id=0, tie_word_embeddings=False)
    # The families of ../shared/fixtures, made afresh at the zoo's size.
    specs.update({
        "llama": (T.LlamaConfig, T.LlamaForCausalLM, dict(base)),
        "mistral": (T.MistralConfig, T.MistralForCausalLM, dict(base, sliding_window=16)),
        "qwen2": (T.Qwen2Config, T.Qwen2ForCausalLM, dict(base)),
        "qwen3": (T.Qwen3Config, T.Qwen3ForCausalLM, dict(base, head_dim=16)),
        "gemma2": (T.Gemma2Config, T.Gemma2ForCausalLM, dict(base, head_dim=16, sliding_window=16,
                                                            tie_word_embeddings=True)),
        "gpt2": (T.GPT2Config, T.GPT2LMHeadModel, dict(n_embd=64, n_layer=2, n_head=4, n_positions=256,
                                                       bos_token_id=1, eos_token_id=2, pad_token_id=0)),
        "gpt_neox": (T.GPTNeoXConfig, T.GPTNeoXForCausalLM, dict(base)),
        "phi": (T.PhiConfig, T.PhiForCausalLM, dict(base, num_key_value_heads=4)),
        "gemma": (T.GemmaConfig, T.GemmaForCausalLM, dict(base, head_dim=16, tie_word_embeddings=True)),
        "phi3": (T.Phi3Config, T.Phi3ForCausalLM, dict(base)),
        "opt": (T.OPTConfig, T.OPTForCausalLM, dict(hidden_size=64, ffn_dim=128, num_hidden_layers=2,
                                                    num_attention_heads=4, max_position_embeddings=256,
                                                    word_embed_proj_dim=64, bos_token_id=1,
                                                    eos_token_id=2, pad_token_id=0)),
    })
    return specs


def make_model(fix, name, spec, out, seed=0):
    Cfg, Model, kw, *_ = spec  # the attention implementation is HFLM's own default here
    kw = copy.deepcopy(kw)
    kw["vocab_size"] = VOCAB
    if "max_position_embeddings" in kw:
        kw["max_position_embeddings"] = max(kw["max_position_embeddings"], 256)
    if "n_positions" in kw:
        kw["n_positions"] = max(kw["n_positions"], 256)
    if "max_seq_len" in kw:  # MPT's ALiBi table: longer sequences fail in transformers
        kw["max_seq_len"] = max(kw["max_seq_len"], 2048)
    torch.manual_seed(seed)
    cfg = Cfg(**kw)
    model = Model(cfg).float().eval()
    fix.randomize(model, seed)
    if getattr(cfg, "tie_word_embeddings", False):
        model.tie_weights()
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    for fn in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json"):
        src = os.path.join(TOKENIZER, fn)
        if os.path.exists(src):
            shutil.copy(src, d)
    return d


def make_seq2seq_model(s2s, name, kw, out, seed=0):
    torch.manual_seed(seed)
    cfg_json = s2s.hub_config(dict(kw, d_model=64, d_kv=16, num_layers=2), VOCAB)
    cfg = s2s.transformers.T5Config(**{k: v for k, v in cfg_json.items()
                                       if k not in ("architectures", "model_type", "torch_dtype")})
    model = s2s.transformers.T5ForConditionalGeneration(cfg).float().eval()
    head = s2s.randomize(model, seed, separate_head=not kw.get("tie_word_embeddings", True))
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    s2s.write_checkpoint(model, head, cfg_json, d)
    corpus = [json.loads(l)["text"] for l in open(os.path.join(ROOT, "..", "shared", "tokenizers", "corpus.jsonl"))]
    # ASCII strings without the special tokens themselves (the corpus has some, which would take
    # the specials' ids).
    texts = [t for t in corpus if t.isascii() and not any(s in t for s in ("<pad>", "</s>", "<unk>"))]
    texts += [s2s.TEXT] * 4
    s2s.t5_tokenizer(VOCAB, d, texts)
    return d


def ours_bs1(exe, model, dtype="float32"):
    import subprocess
    from compare_hf_reference import GEN, LL, ROLLING  # noqa: F401 (loaded by load_script)
    req = {"model_args": {"pretrained": model, "device": "cpu", "dtype": dtype, "batch_size": 1},
           "loglikelihood": LL, "rolling": ROLLING, "generate": GEN}
    p = subprocess.run([exe], input=json.dumps(req), capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def reference(cmp, model, dtype="float32"):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=model, device="cpu", dtype=dtype, batch_size=1)
    mk = lambda t, args: Instance(request_type=t, doc={}, arguments=args, idx=0)
    ll = lm.loglikelihood([mk("loglikelihood", tuple(r)) for r in cmp.LL], disable_tqdm=True)
    roll = lm.loglikelihood_rolling([mk("loglikelihood_rolling", (t,)) for t in cmp.ROLLING],
                                    disable_tqdm=True)
    gen = lm.generate_until([mk("generate_until", (c, dict(k))) for c, k in cmp.GEN], disable_tqdm=True)
    return {"loglikelihood": [[float(a), bool(b)] for a, b in ll], "rolling": [float(x) for x in roll],
            "generate": gen}


def main():
    build, zoo, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    fix = load_script("gen_hf_arch_fixtures")
    cmp = load_script("compare_hf_reference")
    s2s = load_script("gen_hf_seq2seq_fixtures")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    exe = cmp.build_driver(build)
    os.makedirs(zoo, exist_ok=True)
    entries = [(n, s, False) for n, s in zoo_specs(fix).items()] + [(n, s, True) for n, s in s2s.SPECS.items()]
    for name, spec, seq2seq in entries:
        if only and name not in only:
            continue
        row = {"arch": name}
        try:
            d = make_seq2seq_model(s2s, name, spec, zoo) if seq2seq else make_model(fix, name, spec, zoo)
            b = reference(cmp, d)
            a = ours_bs1(exe, d) if seq2seq else cmp.ours(exe, d)
        except Exception as e:  # noqa: BLE001 - one line per architecture, whatever fails
            row["failed"] = f"{type(e).__name__}: {str(e)[:200]}"
            print(json.dumps(row), flush=True)
            continue
        row["ll_max_abs_diff"] = float(f"{max(abs(x[0] - y[0]) for x, y in zip(a['loglikelihood'], b['loglikelihood'])):.3g}")
        row["is_greedy_same"] = f"{sum(x[1] == y[1] for x, y in zip(a['loglikelihood'], b['loglikelihood']))}/{len(cmp.LL)}"
        row["rolling_max_rel_diff"] = float(f"{max(abs(x - y) / max(abs(y), 1e-9) for x, y in zip(a['rolling'], b['rolling'])):.3g}")
        row["generations_same"] = f"{sum(x == y for x, y in zip(a['generate'], b['generate']))}/{len(cmp.GEN)}"
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark (not a test): a random-weight mixture-of-experts model of Qwen3-MoE's shape run by the
reference harness (`lm_eval --model hf`, transformers, offline through
../shared/tools/reference_datasets_shim) and by `lm-eval run --model hf` on the same tasks, side
by side in one run on the CPU: wall time of each whole command, and the scores of both.

The model (~300M parameters: hidden 1024, 8 layers, 32 experts of 384 with the top 4 routed,
per-head q/k norms, the stories260K tokenizer) is made here from a fixed seed, never committed.

Environment: torch 2.15.0, transformers 5.23.0, lm-eval 0.4.13, e.g.
    python3 -m venv .venv-zoo && .venv-zoo/bin/pip install torch==2.15.0 transformers==5.23.0 lm-eval==0.4.13
Usage: .venv-zoo/bin/python scripts/bench_hf_moe.py BUILD_DIR [MODEL_DIR] [--limit N] [--tasks a,b]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("LMEVAL_SHARED", os.path.join(ROOT, "..", "shared"))


def make_model(out):
    if os.path.exists(os.path.join(out, "model.safetensors")):
        return
    import torch
    import transformers as T
    torch.manual_seed(0)
    cfg = T.Qwen3MoeConfig(vocab_size=512, hidden_size=1024, num_hidden_layers=8,
                           num_attention_heads=16, num_key_value_heads=4, head_dim=64,
                           intermediate_size=2048, moe_intermediate_size=384, num_experts=32,
                           num_experts_per_tok=4, norm_topk_prob=True, max_position_embeddings=2048,
                           bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
    model = T.Qwen3MoeForCausalLM(cfg).float().eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.05 * torch.randn(p.shape, generator=g))
    model.save_pretrained(out, safe_serialization=True)
    for fn in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model"):
        shutil.copy(os.path.join(SHARED, "models", "stories260K", fn), out)
    print(f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters", flush=True)


def timed(cmd, env, log):
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}; see {log}")
    return time.monotonic() - t0


def scores(out, task):
    files = glob.glob(os.path.join(out, "**", "results_*.json"), recursive=True)
    r = json.load(open(sorted(files)[-1]))["results"][task]
    return {k: round(v, 4) for k, v in r.items() if "," in k and "stderr" not in k}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("model", nargs="?", default="/tmp/lmeval_moe300m")
    ap.add_argument("--limit", default="100")
    ap.add_argument("--tasks", default="arc_easy,hellaswag")
    ap.add_argument("--batch_size", default="8")
    a = ap.parse_args()
    make_model(a.model)
    hf_data = os.path.join(SHARED, "hf_data")
    env = dict(os.environ, LMEVAL_HF_DATA=hf_data, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    shim = os.path.join(SHARED, "tools", "reference_datasets_shim", "run_lm_eval.py")
    work = tempfile.mkdtemp(prefix="bench_moe_")
    print(f"machine: {os.cpu_count()} cores; limit {a.limit}, batch_size {a.batch_size}", flush=True)
    for task in a.tasks.split(","):
        common = ["--tasks", task, "--limit", a.limit, "--device", "cpu", "--batch_size", a.batch_size]
        ref, ours = os.path.join(work, task, "ref"), os.path.join(work, task, "ours")
        os.makedirs(os.path.join(work, task))
        t_ref = timed([sys.executable, shim, "run", "--model", "hf", "--model_args",
                       f"pretrained={a.model},dtype=float32", "--output_path", ref] + common,
                      env, ref + ".log")
        t_ours = timed([os.path.join(a.build, "lm-eval"), "run", "--model", "hf", "--model_args",
                        f"pretrained={a.model},dtype=float32", "--output_path", ours,
                        "--data_dir", hf_data] + common, env, ours + ".log")
        print(json.dumps({"task": task, "reference_s": round(t_ref, 1), "lm_eval_s": round(t_ours, 1),
                          "speedup": round(t_ref / t_ours, 2), "reference": scores(ref, task),
                          "lm_eval": scores(ours, task)}), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""GPU benchmark of lm-eval's hf backend against the reference (issue 16, point 4).

Runs, on one GPU and the same random-weight model, the reference harness (PyPI lm-eval 0.4.13,
transformers HFLM at its best settings: dtype=bfloat16, batch_size=auto) and `lm-eval run --model
hf --device cuda --batch_size auto`, one task at a time, and prints per task: wall times and their
ratio, the metric of both, lm-eval's scoring time and its achieved FLOP/s as a share of the card's
measured bf16 matrix-multiply rate (measured first, 8192^3 products).

FLOPs of a task are counted from the work its requests define, the same for both sides:
2 x parameters x tokens, where tokens are the request tokens lm-eval's results report
(`performance`: every request's input as an unshared backend feeds it; generation adds its
prompt and generated tokens). Prefix sharing makes lm-eval compute less than that, so the share
is of the useful work, not of the arithmetic actually done.

Needs, in the Python that runs it: torch with CUDA, transformers, lm_eval 0.4.13 (and its
dependencies) for the reference; the reference reads datasets through
../shared/tools/reference_datasets_shim (--shim) from a local hf_data folder (--data).

Usage: scripts/bench_gpu [--lm-eval BIN] [--data HF_DATA] [--shim DIR] [--tokenizer DIR]
         [--shapes 1b,8b] [--tasks arc_challenge:25:100,...] [--out DIR] [--skip-reference]
A task is NAME:FEWSHOT:LIMIT (FEWSHOT '-' = the task's default).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Llama-3.2-1B and Llama-3.1-8B shapes (their config.json values); the weights are random.
SHAPES = {
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
               num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=True),
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False),
}
DEFAULT_TASKS = "arc_challenge:25:100,hellaswag:-:400,mmlu:5:4,gsm8k:5:32,wikitext:-:8"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def measure_matmul_tflops():
    import torch
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    torch.cuda.synchronize()
    return 2 * n ** 3 * reps / (time.perf_counter() - t0) / 1e12


def make_model(shape, out, tokenizer):
    """A random-weight LlamaForCausalLM in bfloat16 with the Llama-3 tokenizer."""
    if os.path.exists(os.path.join(out, "config.json")):
        return
    import shutil
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=128256, max_position_embeddings=131072, rope_theta=500000.0,
                      rms_norm_eps=1e-5, bos_token_id=128000, eos_token_id=128001,
                      rope_scaling={"rope_type": "llama3", "factor": 32.0,
                                    "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 8192},
                      torch_dtype="bfloat16", **SHAPES[shape])
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.fill_(1.0)
            else:
                p.normal_(0.0, 0.02)
    model.save_pretrained(out, safe_serialization=True)
    for f in os.listdir(tokenizer):
        if f.startswith("tokenizer") or f == "special_tokens_map.json":
            shutil.copy(os.path.join(tokenizer, f), out)
    del model
    torch.cuda.empty_cache()


def count_params(model_dir):
    import struct
    n = 0
    for f in os.listdir(model_dir):
        if not f.endswith(".safetensors"):
            continue
        with open(os.path.join(model_dir, f), "rb") as fh:
            size = struct.unpack("<Q", fh.read(8))[0]
            header = json.loads(fh.read(size))
        for k, v in header.items():
            if k != "__metadata__":
                c = 1
                for d in v["shape"]:
                    c *= d
                n += c
    return n


def run(cmd, env, log_path):
    t0 = time.perf_counter()
    with open(log_path, "w") as fh:
        rc = subprocess.call(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    return rc, time.perf_counter() - t0


def results_json(out_dir):
    for dp, _, fs in os.walk(out_dir):
        for f in sorted(fs):
            if f.startswith("results") and f.endswith(".json"):
                with open(os.path.join(dp, f)) as fh:
                    return json.load(fh)
    return None


def main_metric(res, task):
    if not res:
        return None
    r = res.get("results", {}).get(task, {})
    for k in ("acc_norm,none", "acc,none", "exact_match,strict-match", "word_perplexity,none"):
        if k in r:
            return k.split(",")[0], r[k]
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lm-eval", default=os.path.join(ROOT, "build", "lm-eval"))
    p.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "hf_data"))
    p.add_argument("--shim", default=os.path.join(ROOT, "..", "shared", "tools",
                                                  "reference_datasets_shim"))
    p.add_argument("--tokenizer", default=os.path.join(ROOT, "..", "shared", "tokenizers",
                                                       "llama-3"))
    p.add_argument("--shapes", default="1b")
    p.add_argument("--tasks", default=DEFAULT_TASKS)
    p.add_argument("--out", default="/tmp/lmeval_bench_gpu")
    p.add_argument("--skip-reference", action="store_true")
    p.add_argument("--ours-args", default="", help="extra lm-eval model_args, e.g. ',x=y'")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    import torch
    log(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    peak = measure_matmul_tflops()
    log(f"measured bf16 matmul (8192^3): {peak:.0f} TFLOP/s")
    rows = []
    for shape in a.shapes.split(","):
        model = os.path.join(a.out, "model-" + shape)
        t0 = time.perf_counter()
        make_model(shape, model, a.tokenizer)
        n_params = count_params(model)
        log(f"model {shape}: {n_params / 1e9:.2f}B parameters ({time.perf_counter() - t0:.0f} s to make)")
        for spec in a.tasks.split(","):
            name, shots, limit = spec.split(":")
            common = ["--tasks", name, "--limit", limit, "--batch_size", "auto", "--log_samples"]
            if shots != "-":
                common += ["--num_fewshot", shots]
            tag = f"{shape}-{name}"
            env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
                       TOKENIZERS_PARALLELISM="false")
            ours_out = os.path.join(a.out, "ours-" + tag)
            cmd = [a.lm_eval, "run", "--model", "hf", "--device", "cuda", "--model_args",
                   f"pretrained={model},dtype=bfloat16{a.ours_args}", "--data_dir", a.data,
                   "--output_path", ours_out] + common
            rc_o, t_o = run(cmd, env, ours_out + ".log")
            res_o = results_json(ours_out) if rc_o == 0 else None
            t_r, res_r, rc_r = None, None, None
            if not a.skip_reference:
                ref_out = os.path.join(a.out, "ref-" + tag)
                renv = dict(env, LMEVAL_HF_DATA=a.data)
                cmd = [sys.executable, os.path.join(a.shim, "run_lm_eval.py"), "run", "--model",
                       "hf", "--model_args", f"pretrained={model},dtype=bfloat16",
                       "--device", "cuda", "--output_path", ref_out] + common
                rc_r, t_r = run(cmd, renv, ref_out + ".log")
                res_r = results_json(ref_out) if rc_r == 0 else None
            perf = (res_o or {}).get("performance", {}) if res_o else {}
            tokens = sum(v.get("tokens", 0) for v in perf.values() if isinstance(v, dict))
            secs = sum(v.get("seconds", 0) for v in perf.values() if isinstance(v, dict))
            flops = 2.0 * n_params * tokens
            row = dict(shape=shape, task=name, fewshot=shots, limit=int(limit),
                       ours_rc=rc_o, ours_wall_s=round(t_o, 2), ours_model_s=round(secs, 2),
                       ref_rc=rc_r, ref_wall_s=None if t_r is None else round(t_r, 2),
                       ratio=None if (t_r is None or rc_o or rc_r) else round(t_r / t_o, 2),
                       tokens=tokens,
                       ours_tflops=round(flops / secs / 1e12, 1) if secs else None,
                       share_of_matmul=round(flops / secs / 1e12 / peak, 3) if secs else None,
                       ref_tflops_wall=round(flops / t_r / 1e12, 1) if t_r and not rc_r else None,
                       ours_metric=main_metric(res_o, name), ref_metric=main_metric(res_r, name))
            rows.append(row)
            log(json.dumps(row))
            with open(os.path.join(a.out, "bench_gpu.json"), "w") as fh:
                json.dump(dict(peak_tflops=peak, device=torch.cuda.get_device_name(0),
                               rows=rows), fh, indent=1)
    print(f"| model | task | shots | limit | reference s | lm-eval s | ratio | lm-eval scoring s "
          f"| TFLOP/s | share of {peak:.0f} | metric (lm-eval / reference) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m = lambda x: "-" if not x else f"{x[0]} {x[1]:.4f}"  # noqa: E731
        print(f"| {r['shape']} | {r['task']} | {r['fewshot']} | {r['limit']} | {r['ref_wall_s']} "
              f"| {r['ours_wall_s']} | {r['ratio']} | {r['ours_model_s']} | {r['ours_tflops']} "
              f"| {r['share_of_matmul']} | {m(r['ours_metric'])} / {m(r['ref_metric'])} |")
    ok = [r for r in rows if r["ratio"]]
    if ok:
        tr = sum(r["ref_wall_s"] for r in ok)
        to = sum(r["ours_wall_s"] for r in ok)
        print(f"overall: reference {tr:.1f} s, lm-eval {to:.1f} s, ratio {tr / to:.2f}x")


if __name__ == "__main__":
    main()

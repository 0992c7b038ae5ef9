#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/half_precision.json: transformers' numbers for a few of the
hf_arch fixtures (float16 checkpoints) loaded with dtype float16 and bfloat16 on the CPU, with
the attention transformers picks by default (as HFLM loads them), for the C++ test
HfReducedPrecision (tests/models/hf/reduced_precision_test.cpp).

Per fixture, dtype and golden input: the next-token log-probs (log_softmax of the logits cast to
float32), the argmax of each position, the last position's whole row, the smallest gap between a
row's two largest logits (where an argmax may flip on one rounding), and HFLM's sum: its
log_softmax in the logits' own dtype, the targets gathered and summed in that dtype.
For the fixtures with sliding-window or chunked layers (GENERATE), also transformers' greedy
`generate` from each golden input: its decoding steps attend over what DynamicSlidingWindowLayer
keeps, the last window - 1 keys and the new one; and for DeepSeek-V2, whose decoding steps rotate
one position's pairs in torch's scalar complex product (rope.hpp, rotate_pairs_polar).

Environment: torch 2.15.0, transformers 5.23.0 (CPU).
Usage: python scripts/gen_half_precision_goldens.py
"""
import json
import os

# torch's AVX2 kernels, which lm-eval reproduces (compare_half_precision.py), unless set.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # before torch is imported
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import torch  # noqa: E402
import transformers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hf_arch")
# One of each attention and norm variant lm-eval rounds differently: SDPA with Granite's scalar
# multipliers, OLMo 2's float32 norm weight, Gemma 3's (1 + w) norm and sliding windows, BLOOM's
# fused ALiBi, GPT-J's float32 scores, GPT-OSS's sinks and experts; Phi's gelu_new and Falcon's
# FalconLinear (the bias added after the rounded product), with and without ALiBi; the experts of
# Mixtral (float32 router weights), Qwen2-MoE (a shared expert), Qwen3-MoE and OLMoE as
# transformers' default grouped_mm experts implementation combines them; DeepSeek-V2/V3's MLA
# (values narrower than queries: SDPA's math path); Cohere's and Cohere 2's rotation in float32
# with tables rounded to the dtype.
NAMES = ("granite", "olmo2", "gemma3", "bloom", "gptj", "gpt_oss", "phi_qk_layernorm", "falcon_40b",
         "falcon_rw", "mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2", "deepseek_v3",
         "cohere", "cohere2")
DTYPES = ("float16", "bfloat16")
GENERATE = ("gemma3", "starcoder2", "llama4", "cohere2", "exaone4", "olmo3", "deepseek_v2")
NEW_TOKENS = 32


def r(x):
    return float(f"{x:.7g}")


def greedy(model, ids):
    """transformers' greedy generate of NEW_TOKENS tokens (no stop but the config's EOS), with two
    sums per step of the logits the step picked from: sum(logit) and sum((index + 1) * logit), in
    float64, exact for float16/bfloat16 logits, so that one logit a unit in the last place off
    shows (the tokens alone rarely change)."""
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=0,
                             output_logits=True, return_dict_in_generate=True)
    eos = model.generation_config.eos_token_id
    sums = []
    for step in out.logits:
        lg = step[0].double()
        sums.append([float(lg.sum()), float((lg * torch.arange(1, lg.numel() + 1, dtype=torch.float64)).sum())])
    return {"input_ids": ids, "eos_token_id": eos, "new_tokens": out.sequences[0, len(ids):].tolist(),
            "logit_sums": sums}


def main():
    torch.manual_seed(0)
    out = {"meta": {"torch": torch.__version__, "transformers": transformers.__version__,
                    "device": "cpu", "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                    "threads": torch.get_num_threads(), "script": "scripts/gen_half_precision_goldens.py",
                    "logprobs": "log_softmax(logits.float()), 7 significant digits"},
           "fixtures": {}}
    for name in NAMES + tuple(n for n in GENERATE if n not in NAMES):
        d = os.path.join(FIXTURES, name)
        golden = json.load(open(os.path.join(d, "golden.json")))
        per = {}
        for dtype in DTYPES:
            model = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=getattr(torch, dtype)).eval()
            rows = []
            for inp in golden["inputs"][:2] if name in NAMES else []:
                ids = torch.tensor([inp["input_ids"]])
                with torch.no_grad():
                    logits = model(ids).logits[0]
                lp = torch.log_softmax(logits.float(), -1)
                top2 = torch.topk(logits.float(), 2, -1).values
                nxt = ids[0, 1:]
                half_lp = torch.log_softmax(logits, -1)  # HFLM: in the logits' dtype
                hflm_sum = float(torch.gather(half_lp[:-1], 1, nxt.unsqueeze(-1)).sum())
                rows.append({
                    "input_ids": inp["input_ids"],
                    "next_token_logprobs": [r(lp[i, t]) for i, t in enumerate(nxt.tolist())],
                    "argmax": lp.argmax(-1).tolist(),
                    "last_row_logprobs": [r(x) for x in lp[-1].tolist()],
                    "min_top2_logit_margin": r(float((top2[:, 0] - top2[:, 1]).min())),
                    "hflm_sum_logprob": hflm_sum,
                })
            per[dtype] = {"attn_implementation": model.config._attn_implementation, "inputs": rows}
            if name in GENERATE:
                per[dtype]["greedy"] = [greedy(model, inp["input_ids"]) for inp in golden["inputs"][:2]]
        out["fixtures"][name] = per
    path = os.path.join(FIXTURES, "half_precision.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()

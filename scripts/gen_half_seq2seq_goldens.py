#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/half_seq2seq.json: transformers' numbers for the T5 fixtures
(tests/fixtures/hf_arch/t5, flan_t5: float16 checkpoints) loaded with dtype float16 and bfloat16
on the CPU with the attention transformers picks by default (sdpa), for the C++ test of the
encoder-decoder backend in half precision.

Per fixture, dtype and golden input (the fixture's golden.json): the labels' log-probs
(log_softmax of the logits cast to float32), HFLM's sum (its log_softmax in the logits' dtype,
the labels gathered and summed), the argmax of each decoder position; and per generate entry,
transformers' greedy `generate` with two exact sums of each step's logits (sum and
index-weighted sum, float64), so that a logit one unit in the last place off shows.

Environment: torch 2.15.0, transformers 5.23.0 (CPU); ATEN_CPU_CAPABILITY=avx2 and
ONEDNN_MAX_CPU_ISA=AVX2 unless set (the kernels lm-eval reproduces).
Usage: python scripts/gen_half_seq2seq_goldens.py
"""
import json
import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # before torch is imported
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import torch  # noqa: E402
import transformers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "hf_arch")
NAMES = ("t5", "flan_t5")
DTYPES = ("float16", "bfloat16")


def r(x):
    return float(f"{x:.7g}")


def logit_sums(step):
    lg = step[0].double()
    idx = torch.arange(1, lg.numel() + 1, dtype=torch.float64)
    return [float(lg.sum()), float((lg * idx).sum())]


def main():
    out = {"meta": {"torch": torch.__version__, "transformers": transformers.__version__,
                    "device": "cpu", "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                    "threads": torch.get_num_threads(),
                    "script": "scripts/gen_half_seq2seq_goldens.py",
                    "logprobs": "log_softmax(logits.float()), 7 significant digits"},
           "fixtures": {}}
    for name in NAMES:
        d = os.path.join(FIXTURES, name)
        golden = json.load(open(os.path.join(d, "golden.json")))
        per = {}
        for dtype in DTYPES:
            model = transformers.AutoModelForSeq2SeqLM.from_pretrained(
                d, dtype=getattr(torch, dtype)).eval()
            rows = []
            for inp in golden["inputs"]:
                enc = torch.tensor([inp["encoder_ids"]])
                dec = torch.tensor([inp["decoder_input_ids"]])
                labels = torch.tensor(inp["labels"])
                with torch.no_grad():
                    logits = model(input_ids=enc, decoder_input_ids=dec).logits[0]
                lp = torch.log_softmax(logits.float(), -1)
                half_lp = torch.log_softmax(logits, -1)  # HFLM: in the logits' dtype
                rows.append({
                    "encoder_ids": inp["encoder_ids"], "decoder_input_ids": inp["decoder_input_ids"],
                    "labels": inp["labels"],
                    "label_logprobs": [r(lp[i, t]) for i, t in enumerate(labels.tolist())],
                    "hflm_sum_logprob": float(torch.gather(half_lp, 1, labels.unsqueeze(-1)).sum()),
                    "argmax": lp.argmax(-1).tolist(),
                })
            gens = []
            for g in golden["generate"]:
                ids = torch.tensor([g["prompt_ids"]])
                with torch.no_grad():
                    res = model.generate(ids, attention_mask=torch.ones_like(ids),
                                         max_new_tokens=g["max_new_tokens"], do_sample=False,
                                         output_logits=True, return_dict_in_generate=True)
                gens.append({"prompt_ids": g["prompt_ids"], "max_new_tokens": g["max_new_tokens"],
                             "new_ids": res.sequences[0, 1:].tolist(),
                             "logit_sums": [logit_sums(s) for s in res.logits]})
            per[dtype] = {"attn_implementation": model.config._attn_implementation,
                          "inputs": rows, "generate": gens}
        out["fixtures"][name] = per
    path = os.path.join(FIXTURES, "half_seq2seq.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Recomputes the loglikelihood answers of a local-completions run against llama-cpp-python with
transformers in float64, from the request strings in its samples file.

Usage: crosscheck_llama_server_hf.py OUTPUT_DIR TASK MODEL_DIR

The server gets the request as text, puts BOS in front and tokenizes it itself; the harness cuts
the answer at the context length its own tokenizer counted. So each answer should be
log p(continuation | BOS + context) with the continuation's tokens taken as the reference's
_encode_pair takes them (encode context + continuation, split at len(encode(context))). This
checks that chain (text round trip, BOS, the slice) against an independent forward pass; the
float32 server agrees to ~1e-5, so the tolerance is 1e-3. Exit 1 on a failed check.
"""
import glob
import json
import sys

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

TOLERANCE = 1e-3


def main():
    out_dir, task, model_dir = sys.argv[1:4]
    torch.set_num_threads(1)  # a 260K-parameter model: threads only add overhead
    # tokenizers itself: the transformers pinned for llama.cpp's converter cannot read this
    # tokenizer_config.json (written by transformers 5).
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64).eval()
    bos = 1
    path = sorted(glob.glob(f"{out_dir}/**/samples_{task}_*.jsonl", recursive=True))[-1]
    worst, n, failures = 0.0, 0, []
    for line in open(path, encoding="utf-8"):
        row = json.loads(line)
        for args, resp in zip(row["arguments"].values(), row["resps"]):
            ctx, cont = args["arg_0"], args["arg_1"]
            n_spaces = len(ctx) - len(ctx.rstrip(" "))
            if n_spaces:  # _encode_pair moves the context's trailing spaces to the continuation
                ctx, cont = ctx[:-n_spaces], ctx[-n_spaces:] + cont
            ctx_ids = tok.encode(ctx, add_special_tokens=False).ids
            whole = tok.encode(ctx + cont, add_special_tokens=False).ids
            cont_ids = whole[len(ctx_ids):]
            with torch.no_grad():
                logits = model(torch.tensor([[bos] + whole])).logits[0]
            lp = torch.log_softmax(logits, -1)
            ll = sum(lp[len(ctx_ids) + i, t].item() for i, t in enumerate(cont_ids))
            greedy = all(lp[len(ctx_ids) + i].argmax().item() == t for i, t in enumerate(cont_ids))
            got, got_greedy = float(resp[0][0]), str(resp[0][1]) == "True"
            worst = max(worst, abs(ll - got))
            n += 1
            if abs(ll - got) > TOLERANCE or greedy != got_greedy:
                failures.append(f"doc {row['doc_id']}: served ({got}, {got_greedy}) transformers ({ll}, {greedy})")
    print(f"crosscheck {task}: {n} loglikelihood answers, max |served - transformers float64| = {worst:.3g}, "
          f"{len(failures)} outside {TOLERANCE} or with another is_greedy")
    for f in failures[:20]:
        print("crosscheck FAIL " + f)
    return 1 if failures or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Whether a float16/bfloat16 greedy generation that differs between lm-eval and the reference is
a tie of the precision: for each of compare_hf_reference.py's generation requests whose text
differs, the step where the two texts part, transformers' own two best logits there (from
generate's output_logits, the KV-cached decoding HFLM runs) and their gap in units of the
dtype's last place at the top logit, the rank lm-eval's token has in transformers' logits, and
whether the reference's own text changes with the batch (HFLM batch_size 1 against 4, left
padding).

The checkpoints are compare_half_precision.py's (ZOO_DIR/ARCH_float16, ..._bfloat16), made as it
makes them when absent.
Environment: torch 2.15.0, transformers 5.23.0, lm-eval 0.4.13 (CPU), as compare_half_precision.py.
Usage: python scripts/half_precision_ties.py BUILD_DIR ZOO_DIR ARCH [ARCH ...]
"""
import json
import os
import sys

import torch

from half_precision_setup import DTYPES, drivers, load_script, ulp


def logit_ulp(x, dtype):
    return ulp(x, dtype, 2.0 ** -24)


def reference_generations(cmp, d, batch_size):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=d, device="cpu", dtype="auto", batch_size=batch_size)
    reqs = [Instance(request_type="generate_until", doc={}, arguments=(c, dict(k)), idx=0) for c, k in cmp.GEN]
    return lm, lm.generate_until(reqs, disable_tqdm=True)


def first_split(lm, context, kwargs, ours, theirs, dtype):
    """transformers' greedy steps for `context`: the first whose token takes its text away from ours."""
    ids, _ = lm.tok_batch_encode([context])
    out = lm.model.generate(input_ids=ids, max_new_tokens=kwargs["max_gen_toks"], do_sample=False,
                            pad_token_id=lm.tokenizer.pad_token_id, use_cache=True,
                            output_logits=True, return_dict_in_generate=True)
    gen = out.sequences[0, ids.shape[1]:].tolist()
    # A byte-fallback token may end its text inside a UTF-8 character (decoded as U+FFFD): such a
    # step is undecided, and the split is charged to the first step of its run.
    clean = 0
    for j in range(len(gen)):
        text = lm.tok_decode(gen[:j + 1])
        if text.endswith("\ufffd") and ours.startswith(text.rstrip("\ufffd")):
            continue
        if ours.startswith(text):
            clean = j + 1
            continue
        j = clean
        logits = out.logits[j][0].float()
        order = torch.argsort(logits, descending=True).tolist()
        t0, t1 = float(logits[order[0]]), float(logits[order[1]])
        prefix = lm.tok_decode(gen[:j])
        # lm-eval's token there: the best other one whose text extends the common prefix as ours does.
        ours_tok = next((t for t in order[:64] if t != gen[j] and
                         len(lm.tok_decode(gen[:j] + [t]).rstrip("\ufffd")) > len(prefix) and
                         ours.startswith(lm.tok_decode(gen[:j] + [t]).rstrip("\ufffd"))), None)
        return {"step": j, "top2": [t0, t1], "gap_ulps": (t0 - t1) / logit_ulp(t0, dtype),
                "ours_rank": None if ours_tok is None else order.index(ours_tok),
                "ours_gap_ulps": None if ours_tok is None else (t0 - float(logits[ours_tok])) / logit_ulp(t0, dtype)}
    return {"step": None, "note": "transformers' tokens all fit our text (it stopped earlier or later)"}


def main():
    build, zoo, archs = sys.argv[1], sys.argv[2], sys.argv[3:]
    drv = drivers(build)
    cmp, zoo_mod, fix, exe = drv.cmp, drv.zoo, drv.fix, drv.exe
    half = load_script("compare_half_precision")
    specs = zoo_mod.zoo_specs(fix)
    for name in archs:
        for dtype in DTYPES:
            d = os.path.join(zoo, f"{name}_{dtype}")
            if not os.path.isdir(d):
                f32 = os.path.join(zoo, name)
                if not os.path.isdir(f32):
                    zoo_mod.make_model(fix, name, specs[name], zoo)
                half.save_as(f32, dtype, d)
            ours = zoo_mod.ours_bs1(exe, d, dtype="auto")["generate"]
            lm, ref1 = reference_generations(cmp, d, 1)
            _, ref4 = reference_generations(cmp, d, 4)
            for i, (c, k) in enumerate(cmp.GEN):
                if ours[i] == ref1[i]:
                    continue
                row = {"arch": name, "dtype": dtype, "request": i,
                       "reference_bs1_eq_bs4": ref1[i] == ref4[i], "ours_eq_reference_bs4": ours[i] == ref4[i]}
                row.update(first_split(lm, c, k, ours[i], ref1[i], dtype))
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

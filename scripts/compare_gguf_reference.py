#!/usr/bin/env python3
"""The reference's own HFLM on tests/fixtures/gguf against the goldens lm-eval's tests assert.

Usage: VENV/bin/python scripts/compare_gguf_reference.py SHARED/fixtures/llama

Loads each GGUF file with lm_eval.models.huggingface.HFLM(pretrained=tests/fixtures/gguf,
gguf_file=NAME, tokenizer=SHARED/fixtures/llama) and scores golden.json's requests (for the files
whose vocabulary is smaller than that tokenizer's, which have no requests: HFLM's model on the
golden inputs' ids, its next-token log-probs): the printed differences are between the
reference's hf+gguf path and the numbers lm-eval is held to (which scripts/gen_gguf_fixtures.py
made with transformers directly).
"""

import json
import sys
from pathlib import Path

import torch
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM

fixtures = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gguf"
golden = json.loads((fixtures / "golden.json").read_text())
for name, m in golden["models"].items():
    lm = HFLM(pretrained=str(fixtures), gguf_file=name + ".gguf", tokenizer=sys.argv[1],
              device="cpu", batch_size=1)
    if m["requests"]:
        reqs = [Instance("loglikelihood", {}, (r["context"], r["continuation"]), 0)
                for r in m["requests"]]
        out = lm.loglikelihood(reqs, disable_tqdm=True)
        diff = max(abs(o[0] - r["logprob"]) for o, r in zip(out, m["requests"]))
        same_greedy = all(o[1] == r["is_greedy"] for o, r in zip(out, m["requests"]))
        print(f"{name}: max_length {lm.max_length}, max |reference - golden| {diff:.3g}, "
              f"is_greedy equal: {same_greedy}")
        continue
    diff = 0.0
    with torch.no_grad():
        for inp in m["inputs"]:
            ids = inp["input_ids"]
            lp = torch.log_softmax(lm._model_call(torch.tensor([ids]))[0].float(), -1)
            diff = max([diff] + [abs(lp[i, ids[i + 1]].item() - v)
                                 for i, v in enumerate(inp["next_token_logprobs"])])
    print(f"{name}: max_length {lm.max_length}, inputs' max |reference - golden| {diff:.3g}")

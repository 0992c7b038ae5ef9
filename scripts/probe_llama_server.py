#!/usr/bin/env python3
"""Probes a llama-cpp-python server that serves stories260K (GGUF): a completions request with
echo and logprobs must return the prompt's token logprobs, and they must be the model's.

Usage: probe_llama_server.py BASE_URL MODEL_DIR   (e.g. http://127.0.0.1:8000 models/stories260K)

The expected values are independent of llama.cpp: MODEL_DIR/reference/reference.json holds the
prompts with transformers' token ids, and logprobs_p<i>.npy the float64 log-softmax rows that
transformers computed at every position. The server computes in float32 from a GGUF made by
llama.cpp's converter, so the logprobs agree to about 1e-5, not exactly; the token ids, and the
greedy next token, must be equal. Exit 1 on a failed check.
"""
import json
import sys
import urllib.request

import numpy as np

TOLERANCE = 1e-4  # float32 (KV cache too) against float64: observed 3e-6; a float16 KV cache: 6e-3


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def main():
    base, model_dir = sys.argv[1].rstrip("/"), sys.argv[2]
    ref = json.load(open(f"{model_dir}/reference/reference.json", encoding="utf-8"))
    failures, worst, positions = [], 0.0, 0
    for i, p in enumerate(ref["prompts"]):
        ids = p["input_ids"]  # BOS first
        rows = np.load(f"{model_dir}/reference/{p['logprobs_file']}")
        served_ids = post(f"{base}/extras/tokenize", {"input": p["prompt"]})["tokens"]
        if served_ids != ids:
            failures.append(f"prompt {i}: server tokens {served_ids} != transformers {ids}")
            continue
        out = post(f"{base}/v1/completions", {"prompt": p["prompt"], "max_tokens": 1,
                                              "temperature": 0, "logprobs": 1, "echo": True})
        lp = out["choices"][0]["logprobs"]["token_logprobs"]
        # One entry per prompt token after BOS (the first is null, as OpenAI's API has it), then
        # the generated token.
        if len(lp) != len(ids) or lp[0] is not None:
            failures.append(f"prompt {i}: {len(lp)} token_logprobs for {len(ids) - 1} prompt tokens + 1")
            continue
        for j in range(1, len(ids) - 1):
            want = rows[j, ids[j + 1]]
            worst = max(worst, abs(lp[j] - want))
            positions += 1
            if abs(lp[j] - want) > TOLERANCE:
                failures.append(f"prompt {i} position {j}: server {lp[j]} transformers {want}")
        greedy = int(np.argmax(rows[len(ids) - 1]))
        if greedy != p["argmax"][-1]:
            failures.append(f"prompt {i}: the reference file's argmax disagrees with its rows")
        if abs(lp[-1] - rows[len(ids) - 1, greedy]) > TOLERANCE:
            failures.append(f"prompt {i}: generated token logprob {lp[-1]} is not the greedy "
                            f"token's {rows[len(ids) - 1, greedy]}")
    print(f"probe: {len(ref['prompts'])} prompts, {positions} prompt positions, "
          f"max |server - transformers float64| = {worst:.3g}")
    for f in failures:
        print("probe FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

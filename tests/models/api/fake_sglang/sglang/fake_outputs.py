"""What the fake SGLang answers to one generate request (Engine.generate's element and the
server's /generate body alike): text from fake_engine, and with return_logprob the meta_info
lists SGLang gives for logprob_start_len=0: input_token_logprobs [(logprob, token_id, None)] with
None as the first token's logprob, input_top_logprobs the top_logprobs_num best of each position
(None at the first)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "fake_vllm"))
import fake_engine  # noqa: E402

CONTEXT_LEN = 2048


def top_logprobs(prev, k):
    best = sorted(range(fake_engine.VOCAB), key=lambda t: (-fake_engine.logprob(prev, t), t))[:k]
    return [[fake_engine.logprob(prev, t), t, None] for t in best]


def answer(call):
    ids, sp = call["input_ids"], call["sampling_params"] or {}
    text = fake_engine.generate(ids, sp.get("max_new_tokens", 128), sp.get("stop"))
    meta = {"prompt_tokens": len(ids), "completion_tokens": sp.get("max_new_tokens", 128)}
    if call.get("return_logprob"):
        start = call.get("logprob_start_len") or 0
        k = call.get("top_logprobs_num") or 1
        lps, tops = [], []
        for i in range(start, len(ids)):
            if i == 0:
                lps.append([None, ids[0], None])
                tops.append(None)
            else:
                lps.append([fake_engine.logprob(ids[i - 1], ids[i]), ids[i], None])
                tops.append(top_logprobs(ids[i - 1], k))
        meta["input_token_logprobs"] = lps
        meta["input_top_logprobs"] = tops
    return {"text": text, "meta_info": meta}

"""A fake SGLang (lm-eval's tests): the offline Engine the reference's SGLangLM class builds, over
the fake vLLM's deterministic model (tests/models/api/fake_vllm/fake_engine.py; the same numbers
on both sides). Engine(**kwargs) and every generate(...) call are recorded to $FAKE_SGLANG_RECORD
(JSON lines) so that a golden script can compare them with lm-eval's server options and /generate
bodies. `python -m sglang.launch_server` (launch_server.py) is the fake server lm-eval starts."""
import json
import os

from sglang import fake_outputs


def _record(kind, obj):
    path = os.environ.get("FAKE_SGLANG_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"kind": kind, **obj}) + "\n")


class _TokenizerManager:
    def __init__(self, tokenizer, context_len):
        self.tokenizer = tokenizer
        self.context_len = context_len


class Engine:
    def __init__(self, **kwargs):
        from transformers import AutoTokenizer

        _record("engine", {"kwargs": kwargs})
        tok = AutoTokenizer.from_pretrained(kwargs.get("tokenizer_path") or kwargs["model_path"])
        # The engine's context length is the model's: SGLangLM passes no context_length to it.
        self.tokenizer_manager = _TokenizerManager(tok, kwargs.get("context_length") or
                                                   fake_outputs.CONTEXT_LEN)

    def generate(self, input_ids=None, sampling_params=None, return_logprob=False,
                 top_logprobs_num=None, logprob_start_len=None):
        out = []
        for ids, sp in zip(input_ids, sampling_params):
            call = {"input_ids": ids, "sampling_params": sp, "return_logprob": return_logprob,
                    "top_logprobs_num": top_logprobs_num, "logprob_start_len": logprob_start_len}
            _record("generate", {"call": call})
            out.append(fake_outputs.answer(call))
        return out

"""A fake vLLM (lm-eval's tests): the offline API the reference's VLLM class imports, over
fake_engine's deterministic model. LLM(**kwargs) and every SamplingParams are recorded to
$FAKE_VLLM_RECORD (JSON lines) so that a golden script can compare them with lm-eval's server
options and request bodies."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fake_engine  # noqa: E402


def _record(kind, obj):
    path = os.environ.get("FAKE_VLLM_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"kind": kind, **obj}) + "\n")


class SamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        _record("sampling_params", {"params": kwargs})


class TokensPrompt(dict):
    def __init__(self, prompt_token_ids):
        super().__init__(prompt_token_ids=prompt_token_ids)


class _Logprob:
    def __init__(self, logprob, rank):
        self.logprob, self.rank = logprob, rank


class _Completion:
    def __init__(self, text):
        self.text = text


class _Output:
    def __init__(self, prompt_logprobs, text):
        self.prompt_logprobs = prompt_logprobs
        self.outputs = [_Completion(text)]


class _ModelConfig:
    def __init__(self, max_model_len):
        self.max_model_len = max_model_len


class _Engine:
    def __init__(self, max_model_len):
        self.model_config = _ModelConfig(max_model_len)


class LLM:
    def __init__(self, **kwargs):
        _record("llm", {"kwargs": kwargs})
        self.llm_engine = _Engine(kwargs.get("max_model_len") or 2048)

    def generate(self, prompts, sampling_params=None, use_tqdm=False, lora_request=None):
        if not isinstance(sampling_params, list):
            sampling_params = [sampling_params] * len(prompts)
        out = []
        for p, sp in zip(prompts, sampling_params):
            ids = p["prompt_token_ids"]
            kw = sp.kwargs
            pl = None
            if kw.get("prompt_logprobs"):
                pl = [None if e is None else {t: _Logprob(lp, r) for t, lp, r in e}
                      for e in fake_engine.prompt_logprobs(ids)]
            text = fake_engine.generate(ids, kw.get("max_tokens", 16), kw.get("stop"))
            out.append(_Output(pl, text))
        return out

#!/usr/bin/env python3
"""Goldens for the API models: the reference's own LocalCompletionsAPI / LocalChatCompletion
(lm-eval 0.4.13, num_concurrent=1 path) run on fixed requests against a stand-in "server" (a
patched requests.post), recording every request body it sends and the results it returns.

The stand-in answers as tests/models/api/fake_server.hpp does: token t after token p has
log-prob -(1 + (7t + p) % 5) / 4, the best token -0.25; echo answers carry one generated token
(-9.0); text prompts are tokenized with the same tokenizer, no special tokens; a generation is
"<n> tokens" for a prompt of n tokens; chat answers "<think>hmm</think>  " + last message.

Environment: a venv with `pip install "lm-eval[api]==0.4.13" "transformers==4.47.1"` (no torch
needed), e.g. .venv-api. Usage (from the repository root):
    .venv-api/bin/python scripts/gen_api_goldens.py > tests/models/api/goldens/reference_payloads.json
"""
import json
import os
import shutil
import sys
import tempfile

import lm_eval.models.api_models as api_models
from lm_eval.api.instance import Instance
from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tokenizer_dir():
    # transformers 4.47 rejects the list-valued extra_special_tokens of this config; the key has no
    # effect on encoding, so a copy without it is used.
    src = os.path.join(ROOT, "models", "stories260K")
    dst = tempfile.mkdtemp()
    for f in ("tokenizer.json", "tokenizer.model"):
        shutil.copy(os.path.join(src, f), dst)
    with open(os.path.join(src, "tokenizer_config.json")) as fh:
        cfg = json.load(fh)
    cfg.pop("extra_special_tokens", None)
    with open(os.path.join(dst, "tokenizer_config.json"), "w") as fh:
        json.dump(cfg, fh)
    return dst


TOK_DIR = tokenizer_dir()


def fake_lp(p, t):
    return -(1 + (7 * t + p) % 5) / 4.0


class FakeResponse:
    def __init__(self, payload):
        self.payload = payload
        self.ok = True
        self.text = ""

    def raise_for_status(self):
        pass

    def json(self):
        return self.payload


class Server:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.bodies = []

    def tokens(self, prompt):
        if isinstance(prompt, str):
            return self.tokenizer(prompt, add_special_tokens=False).input_ids
        return list(prompt)

    def post(self, url, json=None, headers=None, verify=None, timeout=None):
        body = json
        # What goes over the wire: requests serializes tuples as lists.
        self.bodies.append(__import__("json").loads(__import__("json").dumps(body)))
        if "messages" in body:
            text = "<think>hmm</think>  " + body["messages"][-1]["content"]
            return FakeResponse({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        prompts = body["prompt"]
        if isinstance(prompts, tuple):  # generate_until sends its contexts tuple (a JSON list)
            prompts = list(prompts)
        if not isinstance(prompts, list) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        choices = []
        for i, p in enumerate(prompts):
            toks = self.tokens(p)
            if body.get("echo"):
                lp, top = [None], [None]
                for k in range(1, len(toks)):
                    v = fake_lp(toks[k - 1], toks[k])
                    lp.append(v)
                    top.append({"t%d" % toks[k]: v} if v == -0.25 else {"t%d" % toks[k]: v, "best": -0.25})
                lp.append(-9.0)
                top.append({"gen": -9.0})
                choices.append({"index": i, "text": "echo", "logprobs": {"token_logprobs": lp, "top_logprobs": top}})
            else:
                choices.append({"index": i, "text": "%d tokens" % len(toks)})
        return FakeResponse({"choices": list(reversed(choices))})


LL_REQUESTS = [
    ["Once upon a time", " there was"],
    ["The cat sat on the", " mat"],
    ["Lily ", "went home"],
    ["", "Tom was happy."],
    ["A big red ball rolled down the hill and into the garden where the dog", " barked at it loudly"],
    ["Once upon a time", " there was"],
]
ROLLING = [
    "Once upon a time there was a little girl named Lily who loved to play outside in the sun.",
    "Tom had a dog.",
]
GEN_REQUESTS = [
    ["Hi", {"until": ["\n\n"], "max_gen_toks": 7, "do_sample": False}],
    ["Once upon a time", {"until": ".", "temperature": 0.5}],
    ["The dog ran to the park and", {"until": ["\n\n"], "max_gen_toks": 7, "do_sample": False}],
    ["Q: What is two plus two?\nA:", {"until": ["Q:", "\n"], "max_tokens": 12, "top_p": 0.9}],
]

CONFIGS = [
    {"name": "tokens_bs1", "model_args": {}},
    {"name": "text_bs1", "model_args": {"tokenized_requests": False}},
    {"name": "tokens_bs2", "model_args": {"batch_size": 2}},
    {"name": "text_bs3", "model_args": {"tokenized_requests": False, "batch_size": 3}},
    {"name": "tokens_short_bos", "model_args": {"max_length": 24, "add_bos_token": True, "max_gen_toks": 5}},
    {"name": "eos_seed", "model_args": {"eos_string": "<END>", "seed": 7, "max_gen_toks": 20}},
]


def instances(kind, args):
    return [Instance(request_type=kind, doc={}, arguments=tuple(a), idx=i) for i, a in enumerate(args)]


def run(config):
    model_args = dict(model="stories", base_url="http://stand-in/v1/completions", tokenizer=TOK_DIR,
                      tokenizer_backend="huggingface", **config["model_args"])
    lm = LocalCompletionsAPI(**model_args)
    server = Server(lm.tokenizer)
    api_models.requests.post = server.post
    out = {"name": config["name"], "model_args": config["model_args"]}

    server.bodies = []
    res = lm.loglikelihood(instances("loglikelihood", LL_REQUESTS), disable_tqdm=True)
    out["loglikelihood"] = {"requests": LL_REQUESTS, "payloads": server.bodies,
                            "results": [[float(a), bool(b)] for a, b in res]}

    server.bodies = []
    res = lm.loglikelihood_rolling(instances("loglikelihood_rolling", [[t] for t in ROLLING]), disable_tqdm=True)
    out["loglikelihood_rolling"] = {"requests": ROLLING, "payloads": server.bodies, "results": [float(x) for x in res]}

    server.bodies = []
    res = lm.generate_until(instances("generate_until", GEN_REQUESTS), disable_tqdm=True)
    out["generate_until"] = {"requests": GEN_REQUESTS, "payloads": server.bodies, "results": list(res)}
    return out


def run_chat():
    lm = LocalChatCompletion(model="stories", base_url="http://stand-in/v1/chat/completions",
                             think_end_token="</think>")
    server = Server(None)
    api_models.requests.post = server.post
    chat = lm.apply_chat_template([{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "Q? \u00e9"}])
    reqs = [[chat, {"until": ["a", "b", "c", "d", "e"], "do_sample": False}]]
    res = lm.generate_until(instances("generate_until", reqs), disable_tqdm=True)
    return {"name": "chat", "context": chat.prompt, "gen_kwargs": reqs[0][1], "payloads": server.bodies,
            "results": list(res)}


def main():
    golden = {"generator": "scripts/gen_api_goldens.py", "lm_eval": "0.4.13",
              "configs": [run(c) for c in CONFIGS], "chat": run_chat()}
    json.dump(golden, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Goldens for --model sglang: the reference's own SGLangLM class (lm_eval 0.4.13,
lm_eval/models/sglang_causallms.py) driven over a fake sglang package
(tests/models/api/fake_sglang, put first on PYTHONPATH) whose Engine answers from
fake_outputs.py, the same answers the fake server of the C++ tests gives. Recorded:
sglang.Engine(**kwargs) for each model_args string (what lm-eval's server options must say), the
arguments of every Engine.generate request (what lm-eval's /generate bodies must say), and the
loglikelihood / loglikelihood_rolling / generate_until results. The model's path is written
relative to the checkout.

Usage (from the repository root, the reference's environment with transformers):
    VENV/bin/python scripts/gen_sglang_goldens.py > tests/models/api/goldens/sglang_reference.json
"""
from engine_goldens import LL, ROLL, Fake, dump, inst

fake = Fake("fake_sglang", "FAKE_SGLANG_RECORD")
records = fake.records

from lm_eval.models.sglang_causallms import SGLangLM  # noqa: E402


def make(args):
    return fake.make(SGLangLM, args, "engine")


def calls():
    return [r["call"] for r in records() if r["kind"] == "generate"]


GEN = [("Once upon a time", {"until": ["\n\n"], "max_gen_toks": 5}),
       ("The cat sat", {"until": ["w"], "max_gen_toks": 3, "do_sample": False}),
       ("Lily", {"until": "Q:", "max_gen_toks": 40, "temperature": 0.5}),
       ("Tom and", {"max_gen_toks": 4, "top_p": 0.5})]

cases = []
for args in ["", "max_model_len=24", "context_length=64,max_gen_toks=7", "think_end_token=w3",
             "add_bos_token=True,max_model_len=30", "prefix_token_id=5"]:
    lm, engine_kwargs = make(args)
    ll = lm.loglikelihood([inst("loglikelihood", a) for a in LL])
    ll_calls = calls()
    roll = lm.loglikelihood_rolling([inst("loglikelihood_rolling", (t,)) for t in ROLL])
    roll_calls = calls()
    gen = lm.generate_until([inst("generate_until", (c, dict(k))) for c, k in GEN])
    gen_calls = calls()
    cases.append({"model_args": args, "engine_kwargs": engine_kwargs,
                  "loglikelihood": [[v, g] for v, g in ll], "loglikelihood_calls": ll_calls,
                  "loglikelihood_rolling": roll, "rolling_calls": roll_calls,
                  "generate_until": gen, "generate_calls": gen_calls})

# The engine options of other model_args (no requests).
mappings = []
for args in ["tp_size=2,dp_size=2,mem_fraction_static=0.8,dtype=bfloat16",
             "trust_remote_code=False,chunked_prefill_size=512,enable_torch_compile=True,"
             "kv_cache_dtype=fp8_e5m2",
             "tokenizer_path=models/stories260K,load_format=safetensors,tokenizer_mode=slow,"
             "attention_backend=triton",
             "device=cuda:1,log_level=error,disable_radix_cache=False,max_running_requests=8"]:
    _, engine_kwargs = make(args)
    mappings.append({"model_args": args, "engine_kwargs": engine_kwargs})

dump(GEN, cases, mappings, "engine_kwargs", "model_path")

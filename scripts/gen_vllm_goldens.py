#!/usr/bin/env python3
"""Goldens for --model vllm: the reference's own VLLM class (lm_eval 0.4.13,
lm_eval/models/vllm_causallms.py) driven over a fake vLLM package (tests/models/api/fake_vllm,
put first on PYTHONPATH) whose offline engine answers from fake_engine.py, the same deterministic
model the fake OpenAI server of the C++ tests answers from. Recorded: vllm.LLM(**kwargs) for each
model_args string (what lm-eval's server options must say), the SamplingParams of every request,
and the loglikelihood / loglikelihood_rolling / generate_until results.

The fake's version (vllm-0.8.0.dist-info) takes the reference's path for vLLM before 0.8.3: no
chat template is resolved through vLLM (lm-eval renders the tokenizer's own). The model's path is
written relative to the checkout.

Usage (from the repository root, the reference's environment):
    VENV/bin/python scripts/gen_vllm_goldens.py > tests/models/api/goldens/vllm_reference.json
"""
from engine_goldens import LL, ROLL, Fake, dump, inst

fake = Fake("fake_vllm", "FAKE_VLLM_RECORD")
records = fake.records

from lm_eval.models.vllm_causallms import VLLM  # noqa: E402


def make(args):
    return fake.make(VLLM, args, "llm")


GEN = [("Once upon a time", {"until": ["\n\n"], "max_gen_toks": 5}),
       ("The cat sat", {"until": ["w"], "max_gen_toks": 3, "do_sample": False}),
       ("Lily", {"until": "Q:", "max_gen_toks": 40, "temperature": 0.0}),
       ("Tom and", {"max_gen_toks": 4, "top_p": 0.5})]

cases = []
for args in ["", "max_length=24", "max_model_len=64,max_gen_toks=7,seed=3",
             "think_end_token=w3", "truncation_side=right,max_length=30"]:
    lm, llm_kwargs = make(args)
    ll = lm.loglikelihood([inst("loglikelihood", a) for a in LL])
    ll_params = [r["params"] for r in records()]
    roll = lm.loglikelihood_rolling([inst("loglikelihood_rolling", (t,)) for t in ROLL])
    records()
    gen = lm.generate_until([inst("generate_until", (c, dict(k))) for c, k in GEN])
    gen_params = [r["params"] for r in records()]
    cases.append({"model_args": args, "llm_kwargs": llm_kwargs,
                  "loglikelihood": [[v, g] for v, g in ll], "loglikelihood_params": ll_params[:1],
                  "loglikelihood_rolling": roll, "generate_until": gen,
                  "generate_params": gen_params})

# The engine options of other model_args (no requests).
mappings = []
for args in ["tensor_parallel_size=2,dtype=bfloat16,gpu_memory_utilization=0.8",
             "max_batch_size=32,quantization=awq,revision=main,trust_remote_code=True",
             "max_num_seqs=8,max_batch_size=32,enforce_eager=True,tokenizer_mode=slow",
             "lora_local_path=/tmp/adapter,max_lora_rank=32",
             "pipeline_parallel_size=2,enable_prefix_caching=False"]:
    _, llm_kwargs = make(args)
    mappings.append({"model_args": args, "llm_kwargs": llm_kwargs})

dump(GEN, cases, mappings, "llm_kwargs", "model")

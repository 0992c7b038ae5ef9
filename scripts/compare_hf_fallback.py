#!/usr/bin/env python3
"""Runs the reference (lm_eval's simple_evaluate, --model hf) and `lm-eval run --model hf` side by
side on models lm-eval runs through transformers (the hf backend's transformers path), and prints
per-request log-likelihood differences and whether generations match.

The models are made here, from fixed seeds, into a temporary folder (never committed), with the
stories260K tokenizer (vocab 512) and float32 weights:
  mamba         MambaForCausalLM, an architecture lm-eval has no native implementation of
  gguf_mamba    the same Mamba written as a GGUF file the way llama.cpp's converter writes it
                (MambaModel: A as -exp(A_log), the conv1d kernel squeezed, gguf-py's tensor
                names), run with gguf_file= and tokenizer=: a GGUF architecture lm-eval sends
                through transformers' GGUF loader (needs PyPI's gguf)
  bloom         BloomForCausalLM (ALiBi attention: not native either)
  remote_code   a folder whose config.json's auto_map names its own configuration and modeling
                files (written here), run with trust_remote_code=True
  peft_adalora  tests/fixtures/hf_ckpt's Llama with its AdaLoRA adapter (peft=): a PEFT type
                lm-eval does not merge, so peft applies it in transformers
  peft_dora, peft_ia3, peft_ia3_gpt2, peft_loha, peft_lokr
                the same base models with DoRA, IA3, LoHa and LoKr adapters, which lm-eval merges
                natively
                (for comparison; the ckpt fixtures' tokenizer: ../shared/fixtures/llama)
The tasks, written here too, give every request type: a multiple-choice task (loglikelihood, the
demo story cloze), a rolling-loglikelihood task and a greedy generate_until task.

Environment: torch, transformers 5.23 and lm-eval 0.4.13 in the active Python environment, which
lm-eval's embedded Python uses as well (it must be the Python version lm-eval was built with):
    VIRTUAL_ENV=VENV VENV/bin/python scripts/compare_hf_fallback.py build
Usage: python scripts/compare_hf_fallback.py BUILD_DIR [MODEL ...]
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER = os.path.join(ROOT, "..", "shared", "models", "stories260K")
VOCAB = 512

ROLL_TEXTS = [
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.",
    "The end.",
    "Tom and Sue went to the store. They bought apples, bananas and milk. Then they went home and"
    " ate lunch together. It was a happy day for everyone." * 3,
]
GEN_PROMPTS = ["Once upon a time", "Lily went to the park", "Tom had a big red ball. He", "One day"]

CONFIG_PY = '''
from transformers import PretrainedConfig


class TinyBigramConfig(PretrainedConfig):
    model_type = "tiny_bigram"

    def __init__(self, vocab_size=512, hidden_size=32, num_hidden_layers=1, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers  # generate's cache asks for it
        super().__init__(**kwargs)
'''

MODELING_PY = '''
import torch
from transformers import GenerationMixin, PreTrainedModel
from transformers.modeling_outputs import CausalLMOutput

from .configuration_tiny import TinyBigramConfig


class TinyBigramForCausalLM(PreTrainedModel, GenerationMixin):
    # A model of the folder's own: the logits of a token depend on it and a running mean of the
    # tokens before it (so the context matters), computed again from all ids at every step.
    config_class = TinyBigramConfig
    _supports_cache_class = False

    def __init__(self, config):
        super().__init__(config)
        self.embed = torch.nn.Embedding(config.vocab_size, config.hidden_size)
        self.mix = torch.nn.Linear(2 * config.hidden_size, config.hidden_size)
        self.head = torch.nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        x = self.embed(input_ids)
        if attention_mask is not None:
            x = x * attention_mask.unsqueeze(-1).to(x.dtype)
            counts = attention_mask.cumsum(-1).clamp(min=1).unsqueeze(-1).to(x.dtype)
        else:
            counts = torch.arange(1, x.shape[1] + 1, device=x.device).view(1, -1, 1).to(x.dtype)
        mean = x.cumsum(1) / counts
        h = torch.tanh(self.mix(torch.cat([x, mean], -1)))
        return CausalLMOutput(logits=self.head(h))

    def prepare_inputs_for_generation(self, input_ids, attention_mask=None, **kwargs):
        return {"input_ids": input_ids, "attention_mask": attention_mask}
'''


def copy_tokenizer(d):
    for fn in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model",
               "special_tokens_map.json"):
        src = os.path.join(TOKENIZER, fn)
        if os.path.exists(src):
            shutil.copy(src, d)


def write_mamba_gguf(model, path):
    """The Mamba as llama.cpp's convert_hf_to_gguf.py (MambaModel) writes it, float32; its
    inverse is transformers' MambaTensorProcessor."""
    import gguf
    cfg = model.config
    w = gguf.GGUFWriter(path, "mamba")
    w.add_name("mamba")
    w.add_context_length(2048)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_layer_norm_rms_eps(cfg.layer_norm_epsilon)
    w.add_vocab_size(cfg.vocab_size)
    w.add_ssm_conv_kernel(cfg.conv_kernel)
    w.add_ssm_inner_size(cfg.intermediate_size)
    w.add_ssm_state_size(cfg.state_size)
    w.add_ssm_time_step_rank(cfg.time_step_rank)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MAMBA, cfg.num_hidden_layers)
    for k, t in model.state_dict().items():
        if k == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        t = t.float()
        if k.endswith(".A_log"):
            t = -torch.exp(t)
        if k.endswith("conv1d.weight"):
            t = t.squeeze(1)
        name = names.get_name(k, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise RuntimeError(f"no GGUF name for {k}")
        w.add_tensor(name, t.numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_models(root, only):
    import transformers as T
    out = {}
    specs = {
        "mamba": (T.MambaConfig, T.MambaForCausalLM,
                  dict(hidden_size=64, state_size=8, num_hidden_layers=2, expand=2, conv_kernel=4,
                       time_step_rank=8)),
        "bloom": (T.BloomConfig, T.BloomForCausalLM, dict(hidden_size=64, n_layer=2, n_head=4)),
    }
    for name, (Cfg, Model, kw) in specs.items():
        if only and name not in only and not (name == "mamba" and "gguf_mamba" in only):
            continue
        torch.manual_seed(0)
        cfg = Cfg(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0, **kw)
        model = Model(cfg).float().eval()
        with torch.no_grad():  # weights larger than the init's, so the tokens differ
            for p in model.parameters():
                p.normal_(0.0, 0.3)
        d = os.path.join(root, name)
        model.save_pretrained(d, safe_serialization=True)
        copy_tokenizer(d)
        out[name] = (d, "")
        if name == "mamba" and (not only or "gguf_mamba" in only):
            g = os.path.join(root, "gguf_mamba")
            os.makedirs(g)
            write_mamba_gguf(model, os.path.join(g, "mamba.gguf"))
            out["gguf_mamba"] = (g, f",gguf_file=mamba.gguf,tokenizer={d}")
        if name == "mamba" and only and "mamba" not in only:
            del out[name]
    if not only or "remote_code" in only:
        d = os.path.join(root, "remote_code")
        os.makedirs(d)
        with open(os.path.join(d, "configuration_tiny.py"), "w") as f:
            f.write(CONFIG_PY)
        with open(os.path.join(d, "modeling_tiny.py"), "w") as f:
            f.write(MODELING_PY)
        sys.path.insert(0, root)
        import importlib
        cfg_mod = importlib.import_module("remote_code.configuration_tiny")
        mdl_mod = importlib.import_module("remote_code.modeling_tiny")
        torch.manual_seed(0)
        cfg = cfg_mod.TinyBigramConfig(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2,
                                       pad_token_id=0)
        cfg.auto_map = {"AutoConfig": "configuration_tiny.TinyBigramConfig",
                        "AutoModelForCausalLM": "modeling_tiny.TinyBigramForCausalLM"}
        cfg.architectures = ["TinyBigramForCausalLM"]
        model = mdl_mod.TinyBigramForCausalLM(cfg).float().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.5)
        model.save_pretrained(d, safe_serialization=True)
        # save_pretrained copies the code files only for classes registered from the Hub.
        for fn in ("configuration_tiny.py", "modeling_tiny.py"):
            if not os.path.exists(os.path.join(d, fn)):
                with open(os.path.join(d, fn), "w") as f:
                    f.write(CONFIG_PY if fn.startswith("config") else MODELING_PY)
        copy_tokenizer(d)
        out["remote_code"] = (d, ",trust_remote_code=True")
    ckpt = os.path.join(ROOT, "tests", "fixtures", "hf_ckpt")
    tokenizer = os.path.join(ROOT, "..", "shared", "fixtures", "llama")
    for name, base, adapter in (("peft_adalora", "llama", "adalora_llama"),
                                ("peft_loha", "llama", "loha_llama"),
                                ("peft_lokr", "llama", "lokr_llama"),
                                ("peft_dora", "llama", "dora_llama"),
                                ("peft_ia3", "llama", "ia3_llama"),
                                ("peft_ia3_gpt2", "gpt2", "ia3_gpt2")):
        if not only or name in only:
            out[name] = (os.path.join(ckpt, base),
                         f",tokenizer={tokenizer},peft={os.path.join(ckpt, adapter)}")
    return out


def write_tasks(root):
    t = os.path.join(root, "tasks")
    os.makedirs(t)
    shutil.copy(os.path.join(ROOT, "tasks", "demo", "story_cloze.jsonl"), t)
    with open(os.path.join(t, "roll.jsonl"), "w") as f:
        for x in ROLL_TEXTS:
            f.write(json.dumps({"text": x}) + "\n")
    with open(os.path.join(t, "gen.jsonl"), "w") as f:
        for x in GEN_PROMPTS:
            f.write(json.dumps({"prompt": x, "answer": "x"}) + "\n")
    data = lambda name: os.path.join(t, name)
    yamls = {
        "fb_mc": f"""task: fb_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data("story_cloze.jsonl")}
output_type: multiple_choice
test_split: test
doc_to_text: "{{{{story}}}}"
doc_to_choice: endings
doc_to_target: label
target_delimiter: " "
metric_list:
  - metric: acc
""",
        "fb_roll": f"""task: fb_roll
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data("roll.jsonl")}
output_type: loglikelihood_rolling
test_split: test
doc_to_text: ""
doc_to_target: "{{{{text}}}}"
metric_list:
  - metric: word_perplexity
""",
        "fb_gen": f"""task: fb_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data("gen.jsonl")}
output_type: generate_until
test_split: test
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["."]
  max_gen_toks: 24
  do_sample: false
metric_list:
  - metric: exact_match
""",
    }
    for name, text in yamls.items():
        with open(os.path.join(t, name + ".yaml"), "w") as f:
            f.write(text)
    return t


TASKS = ["fb_mc", "fb_roll", "fb_gen"]


def reference(model_args, tasks_dir, limit):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager
    out = simple_evaluate(model="hf", model_args=model_args, tasks=TASKS,
                          task_manager=TaskManager(include_path=tasks_dir), log_samples=True,
                          limit=limit, batch_size=1)
    return {t: {s["doc_id"]: s["resps"] for s in out["samples"][t]} for t in TASKS}


def ours(build, model_args, tasks_dir, limit, out_dir):
    cmd = [os.path.join(build, "lm-eval"), "run", "--model", "hf", "--model_args", model_args,
           "--tasks", ",".join(TASKS), "--include_path", tasks_dir, "--log_samples",
           "--output_path", out_dir, "--limit", str(limit)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"lm-eval exited {p.returncode}: {p.stderr[-2000:]}")
    lines = [l for l in p.stderr.splitlines()
             if "runs through transformers" in l or "runs natively" in l]
    samples = {}
    for t in TASKS:
        files = glob.glob(os.path.join(out_dir, "**", f"samples_{t}_*.jsonl"), recursive=True)
        with open(files[0]) as f:
            rows = [json.loads(l) for l in f if l.strip()]
        samples[t] = {r["doc_id"]: r["resps"] for r in rows}
    return samples, lines


def main():
    build, only = sys.argv[1], set(sys.argv[2:])
    limit = 12
    root = tempfile.mkdtemp(prefix="lmeval_fallback_")
    try:
        tasks_dir = write_tasks(root)
        for name, (d, extra) in make_models(os.path.join(root, "models"), only).items():
            model_args = f"pretrained={d},dtype=float32,device=cpu" + extra
            row = {"model": name}
            try:
                b = reference(model_args, tasks_dir, limit)
                a, lines = ours(build, model_args, tasks_dir, limit, os.path.join(root, "out_" + name))
            except Exception as e:  # noqa: BLE001 - one line per model, whatever fails
                row["failed"] = f"{type(e).__name__}: {str(e)[-600:]}"
                print(json.dumps(row), flush=True)
                continue
            # The samples file holds values as the reference's file does (sanitize_list: text).
            pair = lambda r: (float(r[0]), str(r[1]) == "True")
            ll = [(pair(x[0]), pair(y[0])) for doc in b["fb_mc"]
                  for x, y in zip(a["fb_mc"][doc], b["fb_mc"][doc])]
            num = lambda r: float(r[0]) if isinstance(r, list) else float(r)
            roll = [(num(a["fb_roll"][doc][0]), num(b["fb_roll"][doc][0])) for doc in b["fb_roll"]]
            gen = [(a["fb_gen"][doc][0][0], b["fb_gen"][doc][0][0]) for doc in b["fb_gen"]]
            # The log line's account of the path ("runs through transformers ...: REASON").
            row["log_line"] = lines[0].split("; ", 1)[-1] if lines else "(none)"
            row["log_lines"] = len(lines)
            row["loglikelihood_requests"] = len(ll)
            row["ll_max_abs_diff"] = float(f"{max(abs(x[0] - y[0]) for x, y in ll):.3g}")
            row["is_greedy_same"] = f"{sum(x[1] == y[1] for x, y in ll)}/{len(ll)}"
            row["rolling_max_abs_diff"] = float(f"{max(abs(x - y) for x, y in roll):.3g}")
            row["generations_same"] = f"{sum(x == y for x, y in gen)}/{len(gen)}"
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

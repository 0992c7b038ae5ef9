#!/usr/bin/env python3
"""Reference outputs of the fixture tasks of tests/fixtures/python_tasks under run settings other
than the defaults: the Python-class task with a chat template (multi-turn with a system
instruction; single-turn with a template name, which a tokenizer with one template ignores), with another few-shot seed, and a task whose
fewshot_config.samples is a Python function taking no argument. Written to
tests/fixtures/python_tasks/goldens_variants/<variant>/ (results, requests, samples and a
manifest.json whose entries carry `lmeval_args`: the lm-eval flags that repeat the run) for
tests/tasks/functions/python_functions_test.cpp.

The reference (PyPI lm-eval 0.4.13) runs its own CLI through ../shared/goldens/tools/
run_reference.py (the offline datasets shim, the hashfake model) with the model `hashfake_chat`
of scripts/hashfake_chat_plugin.py where a run applies a chat template: hashfake's answers, the
chat template of ../shared/tokenizers/qwen3 rendered by transformers as HFLM renders it. lm-eval
repeats it with `--model dummy --model_args tokenizer=<that folder>`.

Usage: scripts/gen_python_task_variant_goldens.py [--venv VENV]   (default .venv-torch in the
repo: lm-eval 0.4.13 with transformers and torch)
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(REPO, "tests", "fixtures", "python_tasks")
TOKENIZER = "tokenizers/qwen3"  # under ../shared
SYSTEM = "Be brief."

# variant: (task, reference CLI flags, lm-eval flags); "<tok>" is the tokenizer folder.
VARIANTS = {
    "class_chat_multiturn": (
        "py_class_task",
        ["--model", "hashfake_chat", "--model_args", "tokenizer=<tok>", "--apply_chat_template",
         "--system_instruction", SYSTEM],
        ["--model_args", "pretrained=hashfake,tokenizer=<tok>", "--apply_chat_template",
         "--system_instruction", SYSTEM]),
    "class_chat_singleturn_named": (
        "py_class_task",
        ["--model", "hashfake_chat", "--model_args", "tokenizer=<tok>", "--apply_chat_template",
         "chatml", "--fewshot_as_multiturn", "false"],
        ["--model_args", "pretrained=hashfake,tokenizer=<tok>", "--apply_chat_template",
         "chatml", "--fewshot_as_multiturn", "false"]),
    "class_fewshot_seed7": (
        "py_class_task", ["--seed", "0,1234,1234,7"],
        ["--model_args", "pretrained=hashfake", "--seed", "0,1234,1234,7"]),
    "fewshot_samples_hook": ("py_helpers_fewshot_samples", [], ["--model_args", "pretrained=hashfake"]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(REPO, ".venv-torch"))
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("variants", nargs="*", default=sorted(VARIANTS))
    args = ap.parse_args()
    shared = os.path.realpath(args.shared)
    tok = os.path.join(shared, TOKENIZER)
    python = os.path.join(args.venv, "bin", "python")
    pkg = subprocess.check_output(
        [python, "-c", "import lm_eval,os;print(os.path.dirname(os.path.dirname(lm_eval.__file__)))"],
        text=True).strip().rstrip("/") + "/"
    scratch = tempfile.mkdtemp()
    try:
        tools = os.path.join(scratch, "goldens", "tools")
        os.makedirs(tools)
        os.symlink(os.path.join(shared, "goldens", "tools", "run_reference.py"),
                   os.path.join(tools, "run_reference.py"))
        os.symlink(os.path.join(shared, "goldens", "tools", "hashfake_plugin.py"),
                   os.path.join(tools, "hashfake_base.py"))
        # run_reference.py imports `hashfake_plugin`: the base model plus hashfake_chat.
        with open(os.path.join(tools, "hashfake_plugin.py"), "w") as f:
            f.write("from hashfake_base import *  # noqa: F401,F403\n"
                    f"exec(open({os.path.join(REPO, 'scripts', 'hashfake_chat_plugin.py')!r})"
                    ".read())\n")
        os.makedirs(os.path.join(scratch, "tools"))
        os.symlink(os.path.join(shared, "tools", "reference_datasets_shim"),
                   os.path.join(scratch, "tools", "reference_datasets_shim"))
        for name in args.variants:
            run(name, python, scratch, tok, shared, pkg, args.venv)
    finally:
        shutil.rmtree(scratch)


def run(name, python, scratch, tok, shared, pkg, venv):
    task, ref_flags, ours_flags = VARIANTS[name]
    work = os.path.join(scratch, name)
    os.makedirs(work)
    rec = os.path.join(work, "requests.jsonl")
    cli = ["run", "--model", "hashfake", "--model_args", "pretrained=hashfake", "--tasks", task,
           "--log_samples", "--output_path", os.path.join(work, "out"),
           "--include_path", os.path.join(FIXTURE, "tasks")]
    cli += [tok if a == "<tok>" else a.replace("<tok>", tok) for a in ref_flags]
    env = dict(os.environ, LMEVAL_HF_DATA=os.path.join(FIXTURE, "data"), HASHFAKE_RECORD=rec,
               HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", VIRTUAL_ENV=venv)
    r = subprocess.run([python, os.path.join(scratch, "goldens", "tools", "run_reference.py")] + cli,
                       env=env, cwd=work, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{name}: the reference failed:\n{r.stderr[-3000:]}")
    out = os.path.join(FIXTURE, "goldens_variants", name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)

    def clean(text):
        # Machine paths: the installed package, the repo, ../shared.
        for p, to in ((pkg, ""), (REPO + "/", ""), (shared, "<shared>")):
            text = text.replace(json.dumps(p)[1:-1], to).replace(p, to)
        return text

    [res] = glob.glob(os.path.join(work, "out", "**", "results_*.json"), recursive=True)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        f.write(clean(open(res, encoding="utf-8").read()))
    [samples] = glob.glob(os.path.join(work, "out", "**", "samples_*.jsonl"), recursive=True)
    with open(os.path.join(out, "samples.jsonl"), "w", encoding="utf-8") as f:
        f.write(clean(open(samples, encoding="utf-8").read()))
    shutil.copy(rec, os.path.join(out, "requests.jsonl"))
    n = sum(1 for _ in open(rec, encoding="utf-8"))
    entry = {
        "run": task, "variant": name, "num_fewshot": "task default", "limit": None,
        "command": clean("LMEVAL_HF_DATA=tests/fixtures/python_tasks/data HASHFAKE_RECORD=<rec> "
                         "python goldens/tools/run_reference.py " + " ".join(
                             json.dumps(c) if " " in c else c for c in cli)).replace(
                                 os.path.join(work, "out"), "OUT"),
        "lmeval_args": ours_flags, "results": "results.json", "tasks": [task],
        "requests": "requests.jsonl", "requests_received": n, "requests_kept": n,
        "requests_doc_id_below": 1000, "samples": ["samples.jsonl"],
        "samples_doc_id_below": 1000, "samples_arguments_kept_for_doc_id_below": 1000,
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump([entry], f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(name, "ok:", n, "requests")


if __name__ == "__main__":
    main()

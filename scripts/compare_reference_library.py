#!/usr/bin/env python3
"""Compares lm-eval with the reference (PyPI lm-eval 0.4.13) on every task of the reference's own
task library whose dataset is in a local data folder (docs/fidelity.md, issue 15 point 7b).

Both sides run the same tasks with the deterministic fake model of ../shared/goldens (`hashfake`
in the reference through goldens/tools/run_reference.py and the offline datasets shim; `--model
dummy` in lm-eval, which implements the same definition) at the same --limit, lm-eval reading the
reference's task folder through `--include_path`. Per task it compares every per-document sample
record of the reference (doc_id, filter, doc, target, arguments = prompts and continuations or
gen_kwargs, resps, filtered_resps, the hashes and per-sample metrics) and the task's block of
`results` and `n-samples`. Tasks run in batches; a failing batch is split until each failing task
runs alone, whose error is its reason.

A task is selected when its `dataset_path` has a folder in DATA (any config); `--data` may be
given twice (e.g. ../shared/hf_data and a stand-in folder of scripts/gen_standin_library_data.py).

Usage: scripts/compare_reference_library.py --venv VENV --lm-eval build/lm-eval
           [--data ../shared/hf_data] [--limit 20] [--batch 40] [--match REGEX] [--out DIR]
           [--tokenizer DIR] [--apply-chat-template [NAME]] [--fewshot-as-multiturn true/false]
           [--system-instruction TEXT]
Writes DIR/report.json (one entry per task: status identical / different / ref_error /
ours_error, and the first differences) and prints a summary, per task and per family (top-level
folder of lm_eval/tasks). Runs with the same --out resume: tasks already in its report are kept.
Tasks built on NLTK's sentence splitter (ifeval) need NLTK_DATA naming a folder with
tokenizers/punkt_tab (scripts/gen_standin_goldens.sh shows where to get it offline). Tasks that
run the model's programs (humaneval, mbpp) need --confirm-run-unsafe-code and, offline,
--code-eval DIR.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIST = r"""
import json, os, sys, lm_eval
from lm_eval.tasks import TaskManager
from lm_eval.tasks._yaml_loader import load_yaml
tm = TaskManager()
out = []
for name in tm.all_subtasks:
    e = tm.task_index[name]
    if e.kind.name not in ("TASK", "PY_TASK") or not e.yaml_path:
        continue
    try:
        cfg = load_yaml(e.yaml_path, resolve_func=False)
        if e.kind.name == "PY_TASK":
            # A Python-class task reads the dataset its class names.
            cls = load_yaml(e.yaml_path, resolve_func=True)["class"]
            cfg = dict(cfg, dataset_path=getattr(cls, "DATASET_PATH", None),
                       dataset_name=getattr(cls, "DATASET_NAME", None))
    except Exception:
        continue
    if e.cfg and cfg.get("task") != name:
        merged = dict(cfg); merged.update(e.cfg); cfg = merged
    text = open(e.yaml_path, encoding="utf-8").read()
    out.append([name, str(e.yaml_path), cfg.get("dataset_path"), cfg.get("dataset_name"),
                "!function" in text])
print(json.dumps({"root": os.path.join(os.path.dirname(lm_eval.__file__), "tasks"), "tasks": out}))
"""

# Keys of the results file that depend on the run, not on the task.
SAMPLE_SKIP = set()


def list_tasks(args):
    cache = os.path.join(args.out, "library.json")
    if os.path.exists(cache):
        return json.load(open(cache))
    r = subprocess.run([os.path.join(args.venv, "bin", "python"), "-c", LIST],
                       capture_output=True, text=True, check=True)
    lib = json.loads(r.stdout.strip().splitlines()[-1])
    json.dump(lib, open(cache, "w"))
    return lib


def has_data(data_dirs, path, name):
    """The dataset's folder holds the config (or, with no config, `default` or a single one)."""
    for d in data_dirs:
        folder = os.path.join(d, path or "")
        if not path or not os.path.isdir(folder):
            continue
        if name and os.path.isdir(os.path.join(folder, name)):
            return True
        if not name and (os.path.isdir(os.path.join(folder, "default"))
                         or len([c for c in os.listdir(folder) if not c.startswith(".")]) == 1):
            return True
    return False


# The reference side runs in one Python process: its TaskManager indexes the selected tasks'
# family folders (top-level folders of lm_eval/tasks; --full-index: the whole library, about 80 s
# on an idle machine and many minutes on a loaded one), then batches go through simple_evaluate
# and the CLI's EvaluationTracker (the same calls and seeds as `lm-eval run`, lm_eval/_cli/run.py);
# a failing batch is halved until each failing task ran alone. A leaf task's configuration is the
# same either way: `include:` and `!function` resolve relative to the YAML file, not the index.
REF_DRIVER = r"""
import json, os, sys, traceback
shared, plan_path, limit, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
folders = json.loads(sys.argv[5])
code_eval, unsafe = sys.argv[6], sys.argv[7] == "1"
hub_metrics = json.loads(sys.argv[9])  # {name: folder}
num_fewshot = None if sys.argv[10] == "" else int(sys.argv[10])
# --seed as the CLI reads it (one value for all four, or four with None), else simple_evaluate's
# defaults
seed_values = [None if x == "None" else int(x) for x in sys.argv[11].split(",") if x]
seeds = seed_values * 4 if len(seed_values) == 1 else seed_values or None
seed_kwargs = {} if seeds is None else dict(
    random_seed=seeds[0], numpy_random_seed=seeds[1], torch_random_seed=seeds[2],
    fewshot_random_seed=seeds[3])
if code_eval:
    hub_metrics.setdefault("code_eval", code_eval)
if hub_metrics:  # evaluate.load(name) (code_eval, squad_v2) from those folders, not the Hub
    import evaluate
    _load = evaluate.load
    evaluate.load = lambda name, *a, **k: _load(hub_metrics.get(name, name), *a, **k)
sys.path.insert(0, os.path.join(shared, "tools", "reference_datasets_shim"))
sys.path.insert(0, os.path.join(shared, "goldens", "tools"))
import lmeval_hf_data_shim  # noqa: F401  before lm_eval
import lm_eval.models  # noqa: F401
import hashfake_plugin  # noqa: F401
chat = json.loads(sys.argv[8])
model, model_args = "hashfake", None
if chat.get("tokenizer"):  # hashfake_chat: hashfake's answers, the tokenizer's chat template
    sys.modules["hashfake_base"] = hashfake_plugin
    sys.path.insert(0, chat["scripts"])
    import hashfake_chat_plugin  # noqa: F401
    model, model_args = "hashfake_chat", {"tokenizer": chat["tokenizer"]}
from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager
tm = TaskManager(include_defaults=False, include_path=folders) if folders else TaskManager()
status = {}
def run(names):
    dest = os.path.join(work, "ref_%d" % len(status) + "_" + names[0][:40])
    # Each batch as a command of its own: the tasks' modules (their module-level state, such as
    # gpqa n_shot's `rng`) imported anew, as _yaml_loader._load_module_with_cache marks them.
    for k in [k for k, m in list(sys.modules.items()) if hasattr(m, "__mtime__")]:
        del sys.modules[k]
    try:
        tracker = EvaluationTracker(output_path=dest)
        res = simple_evaluate(model=model, model_args=model_args, tasks=names, limit=limit,
                              log_samples=True, task_manager=tm, evaluation_tracker=tracker,
                              confirm_run_unsafe_code=unsafe, num_fewshot=num_fewshot,
                              apply_chat_template=chat.get("apply_chat_template", False),
                              # None without a chat template, as the CLI's EvaluateConfig
                              # passes it (results record null, not false)
                              fewshot_as_multiturn=chat.get("fewshot_as_multiturn"),
                              system_instruction=chat.get("system_instruction"),
                              **seed_kwargs)
        samples = res.pop("samples")
        tracker.save_results_aggregated(results=res, samples=samples)
        for t in res["configs"]:
            tracker.save_results_samples(task_name=t, samples=samples[t])
        for t in names:
            status[t] = {"dir": dest}
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        if len(names) > 1:
            run(names[: len(names) // 2]); run(names[len(names) // 2 :])
        else:
            status[names[0]] = {"error": (type(e).__name__ + ": " + str(e))[:300]}
    json.dump(status, open(os.path.join(work, "ref_status.json"), "w"))
for batch in json.load(open(plan_path)):
    run(batch)
"""


def run_reference(args, batches, folders):
    env = dict(os.environ, LMEVAL_HF_DATA=args.merged_data, HF_DATASETS_OFFLINE="1",
               HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if args.confirm_run_unsafe_code:
        env["HF_ALLOW_CODE_EVAL"] = "1"  # evaluate's code_eval refuses to run code without it
    plan = os.path.join(args.work, "ref_plan.json")
    json.dump(batches, open(plan, "w"))
    subprocess.run([os.path.join(args.venv, "bin", "python"), "-c", REF_DRIVER,
                    os.path.abspath(args.shared), plan, str(args.limit), args.work,
                    json.dumps([] if args.full_index else folders),
                    os.path.abspath(args.code_eval) if args.code_eval else "",
                    "1" if args.confirm_run_unsafe_code else "0", json.dumps(chat_options(args)),
                    json.dumps(dict(m.split("=", 1) for m in args.hub_metric)),
                    "" if args.num_fewshot is None else str(args.num_fewshot),
                    args.seed or ""],
                   env=env, capture_output=True, text=True, check=True)
    return json.load(open(os.path.join(args.work, "ref_status.json")))


def chat_options(args):
    """The chat settings both sides run with (--tokenizer, --apply-chat-template, ...): the
    reference's simple_evaluate arguments, fewshot_as_multiturn defaulting as its CLI's does."""
    out = {}
    if args.tokenizer:
        out["tokenizer"] = os.path.abspath(args.tokenizer)
        out["scripts"] = os.path.join(REPO, "scripts")
    if args.apply_chat_template is not None:
        out["apply_chat_template"] = args.apply_chat_template
        out["fewshot_as_multiturn"] = args.fewshot_as_multiturn != "false"
    if args.system_instruction is not None:
        out["system_instruction"] = args.system_instruction
    return out


def run_ours(args, root, names, dest):
    env = dict(os.environ, VIRTUAL_ENV=os.path.abspath(args.venv))
    cmd = [args.lm_eval, "run", "--model", "dummy", "--include_path", root,
           "--tasks", ",".join(names), "--limit", str(args.limit), "--log_samples",
           "--output_path", dest, "--data_dir", args.merged_data]
    if args.tokenizer:
        cmd += ["--model_args", "tokenizer=" + os.path.abspath(args.tokenizer)]
    if args.apply_chat_template is True:
        cmd.append("--apply_chat_template")
    elif args.apply_chat_template is not None:
        cmd += ["--apply_chat_template", args.apply_chat_template]
    if args.fewshot_as_multiturn is not None:
        cmd += ["--fewshot_as_multiturn", args.fewshot_as_multiturn]
    if args.system_instruction is not None:
        cmd += ["--system_instruction", args.system_instruction]
    if args.confirm_run_unsafe_code:
        cmd.append("--confirm_run_unsafe_code")
    if args.num_fewshot is not None:
        cmd += ["--num_fewshot", str(args.num_fewshot)]
    if args.seed:
        cmd += ["--seed", args.seed]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)


def load_outputs(dest):
    results = {}
    for f in glob.glob(os.path.join(dest, "**", "results_*.json"), recursive=True):
        results = json.load(open(f))
    samples = {}
    for f in glob.glob(os.path.join(dest, "**", "samples_*.jsonl"), recursive=True):
        task = re.sub(r"_\d{4}-\d\d-\d\dT.*$", "", os.path.basename(f)[len("samples_"):])
        samples[task] = [json.loads(line) for line in open(f, encoding="utf-8")]
    return results, samples


def diff(a, b, path, out, limit=8):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                out.append(f"{path}/{k}: missing in ours")
            else:
                diff(a[k], b[k], f"{path}/{k}", out, limit)
        for k in a:
            if k not in b:
                out.append(f"{path}/{k}: extra in ours")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} vs reference {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b or (type(a) != type(b) and not (isinstance(a, (int, float))
                                                and isinstance(b, (int, float)))):
        out.append(f"{path}: ours={str(a)[:200]!r} reference={str(b)[:200]!r}")


def compare_task(task, ours, ref):
    (ores, osam), (rres, rsam) = ours, ref
    out = []
    if task not in rsam:
        return ["reference wrote no samples"]
    if task not in osam:
        return ["ours wrote no samples"]
    key = lambda s: (s["doc_id"], s.get("filter"))
    by = {key(s): s for s in osam[task]}
    if len(osam[task]) != len(rsam[task]):
        out.append(f"samples: {len(osam[task])} records vs reference {len(rsam[task])}")
    for s in rsam[task]:
        o = by.get(key(s))
        if o is None:
            out.append(f"samples doc {s['doc_id']} filter {s.get('filter')}: missing in ours")
            continue
        diff(o, s, f"samples[doc {s['doc_id']}, {s.get('filter')}]", out)
    for block in ("results", "n-samples", "higher_is_better"):
        r = rres.get(block, {}).get(task)
        o = ores.get(block, {}).get(task)
        if r is not None:
            diff(o if o is not None else {}, r, block, out)
    # What the run's chat settings make the results file record.
    for key in ("chat_template", "chat_template_sha", "fewshot_as_multiturn",
                "system_instruction", "system_instruction_sha"):
        if ores.get(key) != rres.get(key):
            out.append(f"{key}: ours {str(ores.get(key))[:80]!r} vs reference "
                       f"{str(rres.get(key))[:80]!r}")
    return out


def first_error(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    for l in reversed(lines):
        if re.search(r"Error|error|exception|not found|needs", l):
            return l.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""


def run_ours_batch(args, root, names, ref_dir, report):
    """lm-eval on tasks the reference ran in one batch; a failing run is halved."""
    odest = os.path.join(args.work, "ours_" + str(len(report)) + "_" + names[0][:40])
    shutil.rmtree(odest, ignore_errors=True)
    o = run_ours(args, root, names, odest)
    if o.returncode != 0:
        if len(names) > 1:
            run_ours_batch(args, root, names[: len(names) // 2], ref_dir, report)
            run_ours_batch(args, root, names[len(names) // 2:], ref_dir, report)
            return
        err = o.stderr + o.stdout
        status = "needs_python" if re.search(r"[Pp]ython", err) else "ours_error"
        report[names[0]] = {"status": status, "reason": first_error(err)}
        return
    ref, ours = load_outputs(ref_dir), load_outputs(odest)
    for t in names:
        d = compare_task(t, ours, ref)
        report[t] = {"status": "identical" if not d else "different", "differences": d}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", default=os.path.join(REPO, ".venv-standin"))
    ap.add_argument("--lm-eval", default=os.path.join(REPO, "build", "lm-eval"))
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--data", action="append", default=None)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--match", default="")
    ap.add_argument("--out", default="compare_library")
    ap.add_argument("--keep", action="store_true", help="keep both sides' outputs")
    ap.add_argument("--tokenizer", default="",
                    help="a local tokenizer folder whose chat template both models render "
                         "(reference: scripts/hashfake_chat_plugin.py, needs transformers; "
                         "lm-eval: --model_args tokenizer=)")
    ap.add_argument("--apply-chat-template", nargs="?", const=True, default=None,
                    help="as --apply_chat_template [NAME] on both sides")
    ap.add_argument("--fewshot-as-multiturn", choices=["true", "false"], default=None)
    ap.add_argument("--system-instruction", default=None)
    ap.add_argument("--full-index", action="store_true",
                    help="the reference indexes its whole library, not only the selected "
                         "tasks' family folders")
    ap.add_argument("--confirm-run-unsafe-code", action="store_true",
                    help="both sides run tasks marked unsafe_code (humaneval, mbpp: they run the "
                         "model's programs)")
    ap.add_argument("--code-eval", default="",
                    help="folder with evaluate's code_eval metric (code_eval.py, execute.py of "
                         "huggingface/evaluate's metrics/code_eval), which the reference's "
                         "humaneval and mbpp helpers otherwise fetch from the Hub")
    ap.add_argument("--hub-metric", action="append", default=[], metavar="NAME=DIR",
                    help="the reference's evaluate.load(NAME) reads that folder (the metric's "
                         "files, e.g. scripts/evaluate_metrics/squad_v2) instead of the Hub")
    ap.add_argument("--num-fewshot", type=int, default=None,
                    help="both sides run with this --num_fewshot")
    ap.add_argument("--seed", default=None,
                    help="both sides run with this --seed (N, or four values with None)")
    args = ap.parse_args()
    args.hub_metric = [m.split("=", 1)[0] + "=" + os.path.abspath(m.split("=", 1)[1])
                       for m in args.hub_metric]
    args.data = [os.path.abspath(d) for d in (args.data or [os.path.join(args.shared, "hf_data")])]
    args.lm_eval = os.path.abspath(args.lm_eval)
    os.makedirs(args.out, exist_ok=True)
    args.work = os.path.abspath(os.path.join(args.out, "runs"))
    # One data folder for both sides: links to each <org>/<name>/<config> of every --data folder
    # (the first folder holding a config wins), so stand-in configs of a dataset can sit beside
    # the real ones (aps/super_glue's cb beside ../shared's boolq).
    args.merged_data = os.path.abspath(os.path.join(args.out, "data"))
    shutil.rmtree(args.merged_data, ignore_errors=True)
    for d in args.data:
        for org in sorted(os.listdir(d)):
            if not os.path.isdir(os.path.join(d, org)):
                continue
            for name in sorted(os.listdir(os.path.join(d, org))):
                src = os.path.join(d, org, name)
                if not os.path.isdir(src):
                    continue
                for cfg in sorted(os.listdir(src)):
                    dst = os.path.join(args.merged_data, org, name, cfg)
                    if not os.path.exists(dst):
                        os.makedirs(os.path.dirname(dst), exist_ok=True)
                        os.symlink(os.path.join(src, cfg), dst)

    lib = list_tasks(args)
    root = lib["root"]
    sel = [t for t in lib["tasks"] if has_data(args.data, t[2], t[3]) and re.search(args.match, t[0])]
    print(f"{len(sel)} of {len(lib['tasks'])} YAML tasks have data", file=sys.stderr)
    report_path = os.path.join(args.out, "report.json")
    report = json.load(open(report_path)) if os.path.exists(report_path) else {}
    todo = [t[0] for t in sel if t[0] not in report]
    start = time.time()
    os.makedirs(args.work, exist_ok=True)
    folders = sorted({os.path.join(root, os.path.relpath(t[1], root).split(os.sep)[0])
                      for t in sel if t[0] in todo})
    ref = run_reference(args, [todo[i:i + args.batch] for i in range(0, len(todo), args.batch)],
                        folders)
    print(f"reference: {len(todo)} tasks, {time.time() - start:.0f} s", file=sys.stderr)
    by_dir = {}
    for t in todo:
        if "error" in ref.get(t, {"error": "not run"}):
            report[t] = {"status": "ref_error", "reason": ref.get(t, {}).get("error", "not run")}
        else:
            by_dir.setdefault(ref[t]["dir"], []).append(t)
    for ref_dir, names in by_dir.items():
        run_ours_batch(args, root, names, ref_dir, report)
        json.dump(report, open(report_path, "w"), indent=1, sort_keys=True)
    print(f"both sides: {time.time() - start:.0f} s", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    counts = {}
    for t in sel:
        st = report.get(t[0], {}).get("status", "not run")
        counts[st] = counts.get(st, 0) + 1
    print(json.dumps(counts, sort_keys=True))
    # Per family (top-level folder of lm_eval/tasks): a family counts as identical when every task
    # of it compared (neither side failing) is identical.
    fams = {}
    for t in sel:
        st = report.get(t[0], {}).get("status", "not run")
        f = fams.setdefault(os.path.relpath(t[1], root).split(os.sep)[0], {})
        f[st] = f.get(st, 0) + 1
    same = sorted(f for f, c in fams.items() if c.get("identical") and set(c) <= {
        "identical", "ref_error", "not run"})
    print(f"families with every compared task identical: {len(same)}: {', '.join(same)}")
    for f, c in sorted(fams.items()):
        print(f"  {f}: {json.dumps(c, sort_keys=True)}")
    for t in sel:
        e = report.get(t[0], {})
        if e.get("status") not in ("identical", None):
            print(f"{t[0]}: {e['status']}: {(e.get('differences') or [e.get('reason')])[:3]}")


if __name__ == "__main__":
    main()

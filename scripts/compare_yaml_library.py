#!/usr/bin/env python3
"""Every YAML file of the reference's task library (site-packages/lm_eval/tasks of the venv, about
14,000 files) read by lm-eval (`lm-eval yaml-dump`) against PyYAML's reading of it as the
reference loads task YAMLs (the loader of scripts/gen_yaml_goldens.py), both in the canonical
JSON form of that script. A file is equal when both give the same value, or when both refuse it
(lm-eval refuses what PyYAML fails on or gives in a form JSON cannot hold).

Usage: scripts/compare_yaml_library.py --lm-eval BUILD/lm-eval [--venv DIR] [--tasks DIR]
Exit status 0 when all files are equal, 1 otherwise, 77 when the venv or lm_eval is absent."""
import argparse, importlib.util, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def outer():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--lm-eval", required=True)
    ap.add_argument("--tasks", default=None, help="default: the venv's lm_eval/tasks")
    ap.add_argument("--show", type=int, default=20, help="differences printed in full")
    args = ap.parse_args()
    py = os.path.join(args.venv, "bin", "python")
    if not os.path.exists(py):
        print(f"SKIP: no Python at {py} (make a venv with lm-eval==0.4.13, or pass --venv)")
        sys.exit(77)
    cmd = [py, os.path.abspath(__file__), "--inner", "--lm-eval", args.lm_eval,
           "--show", str(args.show)]
    if args.tasks:
        cmd += ["--tasks", args.tasks]
    sys.exit(subprocess.call(cmd))


def ours_canonical(v):
    if isinstance(v, dict):
        if set(v) == {"!function"}:
            return {"function": v["!function"]}
        if set(v) == {"!float"}:
            return {"float": {"nan": "nan", "inf": "inf", "-inf": "-inf"}[v["!float"]]}
        return {"map": [[k, ours_canonical(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [ours_canonical(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    return {"float": repr(v)}


def inner(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--inner", action="store_true")
    ap.add_argument("--lm-eval", required=True)
    ap.add_argument("--tasks", default=None)
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("gen_yaml_goldens",
                                                  os.path.join(HERE, "gen_yaml_goldens.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    tasks = args.tasks
    if tasks is None:
        try:
            import lm_eval
        except ImportError:
            print("SKIP: the venv has no lm_eval package (pip install lm-eval==0.4.13)")
            return 77
        tasks = os.path.join(os.path.dirname(lm_eval.__file__), "tasks")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tasks) for f in fs
                   if f.endswith((".yaml", ".yml")))
    loader = gen.reference_loader()
    ours = {}
    for i in range(0, len(files), 500):
        batch = files[i:i + 500]
        out = subprocess.run([args.lm_eval, "yaml-dump", *batch], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            rec = json.loads(line)
            ours[rec["file"]] = rec
    equal, diffs = 0, []
    both_refuse = []
    for f in files:
        ref = gen.parse(f, loader)
        mine = ours.get(f)
        rel = os.path.relpath(f, tasks)
        if mine is None:
            diffs.append((rel, "lm-eval printed nothing for it", ""))
            continue
        if "value" in ref:
            if "error" in mine:
                diffs.append((rel, "PyYAML reads it, lm-eval refuses: " + mine["error"], ""))
            elif ours_canonical(mine["value"]) != ref["value"]:
                diffs.append((rel, json.dumps(ref["value"], ensure_ascii=False)[:400],
                              json.dumps(ours_canonical(mine["value"]), ensure_ascii=False)[:400]))
            else:
                equal += 1
        else:
            if "error" in mine:
                equal += 1
                both_refuse.append((rel, ref.get("error") or ref.get("unrepresentable"), mine["error"]))
            else:
                diffs.append((rel, "PyYAML: " + json.dumps(ref), "lm-eval gives a value"))
    print(f"{equal}/{len(files)} YAML files of {tasks} equal "
          f"({len(both_refuse)} of them refused by both)")
    for rel, a, b in both_refuse:
        print(f"  both refuse {rel}: PyYAML: {a} | lm-eval: {b}")
    for rel, a, b in diffs[:args.show]:
        print(f"DIFFERENT {rel}\n  PyYAML:  {a}\n  lm-eval: {b}")
    if len(diffs) > args.show:
        print(f"... and {len(diffs) - args.show} more")
    return 0 if not diffs else 1


if __name__ == "__main__":
    if "--inner" in sys.argv:
        sys.exit(inner(sys.argv[1:]))
    outer()

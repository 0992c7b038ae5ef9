#!/usr/bin/env python3
"""How many of the reference's tasks `lm-eval validate` accepts (docs/fidelity.md, issue 15 point 7a).

Lists every subtask of the reference's own task folder (lm_eval/tasks of the lm-eval package in
VENV, through its TaskManager: YAML tasks and Python-class tasks) and validates them with
`lm-eval validate --include_path <that folder>`, VIRTUAL_ENV=VENV (so `!function`s without a C++
port run in that environment's Python), in batches of tasks sorted by YAML path (a family's tasks together). `validate` reports all
problems of a batch at once, each naming a YAML file and line: a problem is charged to the
batch's tasks whose own YAML is that file, or, for a shared template that is no task's own YAML,
to the batch's tasks in that template's folder and below (an upper bound: a task of that folder
that does not include the template is counted as failing too); `Tasks not found: a, b` names its
tasks. Then each task charged by the folder rule is validated again on its own (`--tasks NAME`), and only its
own problems count (--no-recheck keeps the upper bound). Writes a JSON report.

Usage: scripts/validate_reference_library.py [--venv .venv-standin] [--lm-eval build/lm-eval]
                                             [--batch 256] [--out validate_library.json]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIST = r"""
import json, os, lm_eval
from lm_eval.tasks import TaskManager
tm = TaskManager()
out = []
for name in tm.all_subtasks:
    e = tm.task_index[name]
    out.append([name, e.kind.name, str(e.yaml_path) if e.yaml_path else ""])
print(json.dumps({"root": os.path.join(os.path.dirname(lm_eval.__file__), "tasks"), "tasks": out}))
"""


def validate(args, root, names):
    # Offline: the data is not needed to validate, and each Hub attempt would cost a timeout.
    env = dict(os.environ, VIRTUAL_ENV=os.path.abspath(args.venv), HF_HUB_OFFLINE="1")
    cmd = [args.lm_eval, "validate", "--include_path", root, "--tasks", ",".join(names)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace",
                       timeout=1800)
    return r.returncode, r.stdout + r.stderr


def problems(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.endswith("problem found:") or line.endswith("problems found:"):
            return [l.strip() for l in lines[i + 1:] if l.startswith("  ")]
    return [l for l in lines if "error" in l.lower()][-3:] or lines[-3:]


def check(args, root, batch, failures, stats):
    names = [t[0] for t in batch]
    rc, text = validate(args, root, names)
    stats["invocations"] += 1
    if rc == 0:
        return
    for p in problems(text):
        hit = []
        named = re.search(r"\btask ([^\s,:]+)", p)
        if "Tasks not found:" in p:
            # "a, b; a, b are in the reference's task library ..." names them once
            listed = p.split("Tasks not found:", 1)[1].split("(expected")[0].split(";")[0]
            # "name (did you mean: ...)" keeps only the name
            missing = {n.strip().split(" (")[0] for n in listed.split(",")}
            hit = [t for t in batch if t[0] in missing]
        elif named and any(t[0] == named.group(1) for t in batch):
            # a problem naming its task (a data file outside the task folder, a helper's error)
            hit = [t for t in batch if t[0] == named.group(1)]
        else:
            path = p.split(":", 1)[0]
            if not path.startswith("/"):
                path = os.path.join(root, path)
            hit = [t for t in batch if t[2] == path]
            if not hit:
                folder = os.path.dirname(path) + "/"
                hit = [t for t in batch if t[2].startswith(folder)]
                stats.setdefault("by_folder", set()).update(t[0] for t in hit)
        if not hit:
            stats["unattributed"] += 1
            failures.setdefault("<unattributed>", {"problems": []})["problems"].append(p)
        for t in hit:
            failures.setdefault(t[0], {"exit": rc, "problems": []})["problems"].append(p)


def recheck(args, root, tasks, failures, stats):
    """Validates on its own each failing task charged by the folder rule: a batch charges a
    shared template's problem to every task of its folder."""
    by_name = {t[0]: t for t in tasks}
    # A problem naming the task or its own YAML is its own; only the folder rule overcharges.
    for name in sorted(n for n in failures if n in by_name and n in stats.get("by_folder", ())):
        rc, text = validate(args, root, [name])
        stats["invocations"] += 1
        stats["rechecked"] += 1
        if rc == 0:
            del failures[name]
        else:
            failures[name] = {"exit": rc, "problems": problems(text)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(REPO, ".venv-standin"))
    ap.add_argument("--lm-eval", default=os.path.join(REPO, "build", "lm-eval"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--out", default="validate_library.json")
    ap.add_argument("--only", help="comma-separated subset of task names (for a quick check)")
    ap.add_argument("--no-recheck", action="store_true",
                    help="keep the batch's attribution of problems (an upper bound)")
    args = ap.parse_args()

    listed = json.loads(subprocess.check_output(
        [os.path.join(args.venv, "bin", "python"), "-c", LIST], text=True))
    root, tasks = listed["root"], listed["tasks"]
    if args.only:
        keep = set(args.only.split(","))
        tasks = [t for t in tasks if t[0] in keep]
    tasks.sort(key=lambda t: (t[2], t[0]))
    names = [t[0] for t in tasks]
    failures, stats = {}, collections.Counter()
    t0 = time.time()
    for i in range(0, len(names), args.batch):
        check(args, root, tasks[i:i + args.batch], failures, stats)
        print(f"{min(i + args.batch, len(names))}/{len(names)} validated, {len(failures)} failing, "
              f"{time.time() - t0:.0f}s", file=sys.stderr)
    if not args.no_recheck:
        recheck(args, root, tasks, failures, stats)
        print(f"rechecked alone: {len(failures)} failing, {time.time() - t0:.0f}s", file=sys.stderr)
    kinds = collections.Counter(t[1] for t in tasks)
    failed_kinds = collections.Counter(t[1] for t in tasks if t[0] in failures)
    unattributed = failures.pop("<unattributed>", {"problems": []})["problems"]
    report = {
        "tasks": len(names),
        "passed": len(names) - len(failures),
        "unattributed_problems": unattributed,
        "by_kind": {k: {"tasks": n, "failed": failed_kinds[k]} for k, n in kinds.items()},
        "seconds": round(time.time() - t0),
        "validate_invocations": stats["invocations"],
        "rechecked_alone": stats["rechecked"],
        "failures": {n: dict(f, yaml=dict((t[0], t[2]) for t in tasks)[n].replace(root + "/", ""))
                     for n, f in sorted(failures.items())},
    }
    for f in report["failures"].values():
        f["problems"] = [p.replace(root + "/", "") for p in f["problems"]]
    with open(args.out, "w", encoding="utf-8") as fo:
        json.dump(report, fo, indent=1, ensure_ascii=False)
        fo.write("\n")
    print(f"{report['passed']}/{report['tasks']} pass validate "
          f"({100 * report['passed'] / max(1, report['tasks']):.1f}%)")


if __name__ == "__main__":
    main()

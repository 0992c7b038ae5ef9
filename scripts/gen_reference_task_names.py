#!/usr/bin/env python3
"""Writes tasks/reference_library_names.txt: every task, group and tag name of the reference's
task library (PyPI lm-eval, its own TaskManager index), so that lm-eval can say how to get a
name of that library when the package is not installed (src/tasks/reference_library.cpp).

Usage: scripts/gen_reference_task_names.py [VENV]   (VENV: a venv with lm-eval==0.4.13,
default .venv-ref in the repository)
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
venv = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".venv-ref")
code = ("import lm_eval, logging; logging.disable(logging.CRITICAL)\n"
        "from importlib.metadata import version\n"
        "from lm_eval.tasks import TaskManager\n"
        "print(version('lm_eval'))\n"
        "print('\\n'.join(sorted(TaskManager().all_tasks)))\n")
out = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], check=True,
                     capture_output=True, text=True).stdout.split("\n")
ver, names = out[0], [n for n in out[1:] if n]
with open(os.path.join(ROOT, "tasks", "reference_library_names.txt"), "w") as fh:
    fh.write(f"# Task, group and tag names of the reference's library (lm-eval {ver}, "
             f"{len(names)} names), by scripts/gen_reference_task_names.py.\n")
    fh.write("\n".join(names) + "\n")
print(f"{len(names)} names of lm-eval {ver}")

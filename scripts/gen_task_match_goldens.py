#!/usr/bin/env python3
"""Goldens for --tasks globs from the reference itself (lm_eval 0.4.13): TaskManager().match_tasks
(utils.pattern_match over all_tasks: every task, group and tag name of its library) for each
pattern below, alone. The patterns avoid names that only lm-eval's built-ins have (demo_*), so
that an index of the reference's library plus lm-eval's tasks/ must give the same lists.
Output: tests/tasks/goldens/match_tasks.json.
Usage: <venv with lm_eval 0.4.13>/bin/python scripts/gen_task_match_goldens.py
"""
import json
import logging
import os

import lm_eval
from lm_eval.tasks import TaskManager

logging.disable(logging.WARNING)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tasks", "goldens",
                   "match_tasks.json")

PATTERNS = [
    "mmlu_high_school_c*",
    "arc_*",
    "hellaswag*",
    "*_spanish",
    "mmlu_[a-c]*",
    "mmlu_[!a-s]*",
    "leaderboard_bbh_*",
    "?iqa",
    "wikitext",
    "lambada_openai*",
    "super_glue*",
    "mmlu",
    "mmlu_humanities",
    "ai2_arc",
    "no_such_task_*",
]

tm = TaskManager()
out = {"lm_eval_version": lm_eval.__version__ if hasattr(lm_eval, "__version__") else "0.4.13",
       "matches": {p: tm.match_tasks([p]) for p in PATTERNS}}
with open(OUT, "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1)
    f.write("\n")

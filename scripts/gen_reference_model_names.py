#!/usr/bin/env python3
"""Writes tests/models/goldens/reference_model_names.txt: every model name of the reference's
registry (lm_eval 0.4.13), one `name<TAB>module:Class` a line, sorted.

Names come from two places of the installed reference, as its registry fills itself: the lazy
MODEL_MAPPING of lm_eval/models/__init__.py, and the @register_model(...) decorators of the
lm_eval/models/*.py files (read as source, so that no backend's heavy imports run).
Run with the reference's environment: VENV/bin/python scripts/gen_reference_model_names.py (VENV: a venv with PyPI lm-eval 0.4.13)
"""
import ast
import pathlib
import sys

import lm_eval.models as models

root = pathlib.Path(models.__file__).parent
names = dict(models.MODEL_MAPPING)
for path in sorted(root.glob("*.py")):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for dec in node.decorator_list:
            if (isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "register_model"):
                for arg in dec.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        names.setdefault(arg.value, f"lm_eval.models.{path.stem}:{node.name}")

out = pathlib.Path(__file__).resolve().parent.parent / "tests/models/goldens/reference_model_names.txt"
out.write_text("".join(f"{n}\t{names[n]}\n" for n in sorted(names)))
print(f"{len(names)} names -> {out}", file=sys.stderr)

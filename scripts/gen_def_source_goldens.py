#!/usr/bin/env python3
"""What the reference's results `configs` show for a `!function` (TaskConfig.serialize_function:
inspect.getsource, else str()) of the module-level functions of the reference modules lm-eval has
C++ ports of (scripts/gen_function_sources.py), and of crafted modules (decorators, comments,
blank lines, a name bound again), computed by CPython's inspect. lm-eval shows the same text for
a port of a `def` (src/tasks/function_source.cpp); for other callables (functools.partial, whose
str() holds an address) the golden holds null.

Writes tests/tasks/def_source_golden.json: [{"module": text, "cases": {name: source or null}}],
read by tests/tasks/function_source_test.cpp.

Usage: scripts/gen_def_source_goldens.py [--venv DIR]   (DIR: lm-eval==0.4.13; default .venv-ref)"""
import argparse
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "tasks", "def_source_golden.json")

CRAFTED = [
    '''import functools


def plain(doc):
    return doc["a"]


def deco(fn):
    return fn


# a comment before
@deco
@functools.lru_cache(maxsize=None)
def decorated(x):
    # inside
    y = x

# a comment at column 0 inside the block

    return y
# trailing comment


def rebound(doc):
    return 1


rebound = functools.partial(plain)
partial_fn = functools.partial(plain)


def last(doc):
    return 1


def last(doc):  # the later def wins
    return 2
''',
    '''def multi_line(
    doc,
    extra=None,
):
    """Doc
string."""
    return doc


def no_newline_at_end(doc):
    return doc''',
]


def load(path, tag):
    spec = importlib.util.spec_from_file_location("defsrc_" + tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cases_of(path, tag):
    mod = load(path, tag)
    out = {}
    others = 0
    for name, obj in vars(mod).items():
        if name.startswith("__") or not callable(obj) or inspect.isclass(obj):
            continue
        fn = inspect.unwrap(obj)
        if inspect.isfunction(fn) and fn.__code__.co_filename == path:
            out[name] = inspect.getsource(obj)
        elif others < 3:  # functools.partial, imported functions: a few of each module
            out[name] = None
            others += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.in_venv:
        sys.exit(subprocess.call([os.path.join(args.venv, "bin", "python"), __file__,
                                  "--in-venv"]))
    import lm_eval

    sys.path.insert(0, HERE)
    from gen_function_sources import PORTS

    tasks = os.path.join(os.path.dirname(lm_eval.__file__), "tasks")
    golden = []
    for i, (_, rel) in enumerate(PORTS):
        path = os.path.join(tasks, rel)
        text = open(path, encoding="utf-8").read()
        if len(text) > 12000 or rel.startswith(("leaderboard/ifeval", "bbh/")):
            continue  # keep the golden small; ifeval's import fetches NLTK data
        try:
            cases = cases_of(path, str(i))
        except ImportError as e:  # e.g. super_glue/record/util.py without transformers
            print(f"skipped {rel}: {e}", file=sys.stderr)
            continue
        golden.append({"path": rel, "module": text, "cases": cases})
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(CRAFTED):
            path = os.path.join(tmp, f"crafted{i}.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            golden.append({"path": f"crafted{i}.py", "module": text,
                           "cases": cases_of(path, f"c{i}")})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {sum(len(g['cases']) for g in golden)} cases of {len(golden)} modules to "
          f"{os.path.relpath(OUT, ROOT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()

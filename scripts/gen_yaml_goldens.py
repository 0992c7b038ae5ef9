#!/usr/bin/env python3
"""PyYAML's parse of the tricky-case corpus tests/config/yaml_corpus/*.yaml, read exactly as the
reference reads task YAMLs (lm_eval/tasks/_yaml_loader.py: yaml.CSafeLoader when PyYAML has
libyaml, else FullLoader, plus a `!function` constructor), written as canonical JSON to
tests/config/goldens/yaml_corpus.json.

Usage: scripts/gen_yaml_goldens.py [--venv DIR]   (default .venv-ref in the repo; DIR/bin/python
must have PyYAML, and lm_eval if its exact loader base class is to be used)."""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def reexec_in_venv():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inner:
        py = os.path.join(args.venv, "bin", "python")
        sys.exit(subprocess.call([py, os.path.abspath(__file__), "--inner"]))


def reference_loader():
    """A Loader class as lm_eval.tasks._yaml_loader._make_loader builds it, with `!function`
    yielding a marker instead of importing the function."""
    import yaml
    try:
        from lm_eval.tasks._yaml_loader import _Base as base
    except Exception:  # same rule as the reference's module
        base = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.FullLoader

    class Loader(base):
        pass

    yaml.add_constructor("!function",
                         lambda loader, node: FunctionRef(loader.construct_scalar(node)),
                         Loader=Loader)
    return Loader


class FunctionRef:
    def __init__(self, name):
        # lm_eval/tasks/_yaml_loader.py _import_func_in_yml refuses a name without a module part
        if not name.rpartition(".")[0]:
            raise ValueError(f"Invalid function reference '{name}': no module path")
        self.name = name


class Unrepresentable(Exception):
    pass


def canonical(v, active=()):
    """Exact types: {"int": "12"}, {"float": repr}, strings, true/false/null, lists,
    {"map": [[key, value], ...]} in order, {"function": name}. Anything JSON cannot hold the way
    lm-eval does (dates, bytes, sets, non-string keys) raises Unrepresentable."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        if not -2**63 <= v < 2**63:
            raise Unrepresentable("an integer beyond 64 bits")
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, (list, dict)):
        if id(v) in active:
            raise Unrepresentable("a recursive structure")
        active = active + (id(v),)
    if isinstance(v, list):
        return [canonical(x, active) for x in v]
    if isinstance(v, dict):
        for k in v:
            if not isinstance(k, str):
                raise Unrepresentable(f"key {k!r} of type {type(k).__name__}")
        return {"map": [[k, canonical(x, active)] for k, x in v.items()]}
    if isinstance(v, FunctionRef):
        return {"function": v.name}
    raise Unrepresentable(type(v).__name__)


def parse(path, loader):
    import yaml
    with open(path, "rb") as fh:
        try:
            value = yaml.load(fh, Loader=loader)  # noqa: S506 (the reference's call)
        except Exception as e:  # every PyYAML error (and ValueError from constructors)
            # the problem only: the message's "in <file>, line n" part names a machine path
            problem = getattr(e, "problem", None) or str(e).split("\n")[0]
            return {"error": f"{type(e).__name__}: {problem}"}
    try:
        return {"value": canonical(value)}
    except Unrepresentable as e:
        return {"unrepresentable": str(e)}


def main():
    import yaml
    loader = reference_loader()
    corpus = os.path.join(ROOT, "tests", "config", "yaml_corpus")
    out = {}
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".yaml"):
            out[name] = parse(os.path.join(corpus, name), loader)
    dest = os.path.join(ROOT, "tests", "config", "goldens", "yaml_corpus.json")
    with open(dest, "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/gen_yaml_goldens.py",
                   "pyyaml": yaml.__version__, "libyaml": getattr(yaml, "__with_libyaml__", False),
                   "loader_base": loader.__mro__[1].__name__, "cases": out},
                  f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out)} cases to {os.path.relpath(dest, ROOT)}")


if __name__ == "__main__":
    if "--inner" not in sys.argv:
        reexec_in_venv()
    else:
        main()
